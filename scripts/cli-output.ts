import { InvalidAuditsError, MvrError, formatProblem } from '../core/errors.ts';

/** CLI exit codes: stable, documented in the README. */
export const EXIT = {
  OK: 0,
  FAILURE: 1,
  USAGE: 2,
  INVALID_INPUT: 3,
  // mvr verify
  UNSIGNED: 10,
  INVALID_SIGNATURE: 11,
  FETCH_FAILED: 12,
} as const;

const EXIT_BY_CODE: Record<string, number> = {
  INVALID_CONFIG: EXIT.USAGE,
  INVALID_KEY: EXIT.USAGE,
  INVALID_KEY_SET: EXIT.INVALID_INPUT,
  INVALID_AUDITS: EXIT.INVALID_INPUT,
  INVALID_DOMAIN: EXIT.INVALID_INPUT,
  FETCH_FAILED: EXIT.FETCH_FAILED,
};

/**
 * The CLI's edge: a typed error becomes a message on stderr (or a JSON object on stdout with
 * `--json`) and an exit code. Unknown errors keep their stack for the bug report.
 */
export function reportError(error: unknown, json: boolean): number {
  if (!(error instanceof MvrError)) {
    process.stderr.write(`mvr: unexpected error: ${(error as Error)?.stack ?? String(error)}\n`);
    return EXIT.FAILURE;
  }
  const exitCode = EXIT_BY_CODE[error.code] ?? EXIT.FAILURE;
  if (json) {
    const body: Record<string, unknown> = { ok: false, code: error.code, message: error.message };
    if (error instanceof InvalidAuditsError) body.problems = error.problems;
    process.stdout.write(`${JSON.stringify(body)}\n`);
    return exitCode;
  }
  if (error instanceof InvalidAuditsError) {
    for (const p of error.problems) process.stderr.write(`${formatProblem(p)}\n`);
    if (error.total > error.problems.length) process.stderr.write(`... and ${error.total - error.problems.length} more\n`);
  }
  process.stderr.write(`mvr: ${error.code}: ${error.message}\n`);
  return exitCode;
}

/** Wraps a command body: runs it, maps a thrown error to an exit code. */
export async function runAction(json: boolean, body: () => Promise<number | void>): Promise<void> {
  try {
    const code = await body();
    if (typeof code === 'number') process.exitCode = code;
  } catch (error) {
    process.exitCode = reportError(error, json);
  }
}

/** A progress line on a terminal, redrawn in place; silent when stderr is not a TTY. */
export function createProgressLine(stream: NodeJS.WriteStream = process.stderr) {
  const enabled = stream.isTTY === true;
  let drawn = false;
  return {
    update(text: string) {
      if (!enabled) return;
      stream.write(`\r\x1b[2K${text}`);
      drawn = true;
    },
    done() {
      if (drawn) stream.write('\r\x1b[2K');
      drawn = false;
    },
  };
}
