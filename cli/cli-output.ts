import { hideApiKeys } from '../access/api-keys.ts';
import { exitCodeOf, formatProblem, InvalidAuditsError, isMvrError } from '../core/errors.ts';

/**
 * The CLI's edge: a typed error becomes a message on stderr (or a JSON object on stdout with
 * `--json`) and the exit code the error registry gives its code (1 for an unexpected error,
 * which keeps its stack for the bug report).
 */
export function reportError(error: unknown, json: boolean): number {
  if (!isMvrError(error)) {
    process.stderr.write(`mvr: unexpected error: ${hideApiKeys((error as Error)?.stack ?? String(error))}\n`);
    return 1;
  }
  const exitCode = exitCodeOf(error.code);
  if (json) {
    const body: Record<string, unknown> = { ok: false, code: error.code, message: hideApiKeys(error.message) };
    if (error instanceof InvalidAuditsError) body.problems = error.problems;
    process.stdout.write(`${JSON.stringify(body)}\n`);
    return exitCode;
  }
  if (error instanceof InvalidAuditsError) {
    for (const p of error.problems) process.stderr.write(`${formatProblem(p)}\n`);
    if (error.total > error.problems.length) process.stderr.write(`... and ${error.total - error.problems.length} more\n`);
  }
  process.stderr.write(`mvr: ${error.code}: ${hideApiKeys(error.message)}\n`);
  return exitCode;
}

/** Wraps a command body: runs it, maps a thrown error to an exit code. */
export async function runAction(json: boolean, body: () => Promise<number | undefined>): Promise<void> {
  try {
    const code = await body();
    if (typeof code === 'number') process.exitCode = code;
  } catch (error) {
    process.exitCode = reportError(error, json);
  }
}
