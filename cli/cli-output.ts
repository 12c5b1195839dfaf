import { hideApiKeys } from '../access/api-keys.ts';
import { exitCodeOf, InvalidAuditsError, isMvrError, problemLines } from '../core/errors/errors.ts';
import type { CliIo } from './io.ts';

/**
 * The CLI's edge: a typed error becomes a message on stderr (or a JSON object on stdout with
 * `--json`) and the exit code the error registry gives its code (1 for an unexpected error,
 * which keeps its stack for the bug report).
 */
export function reportError(io: CliIo, error: unknown, json: boolean): number {
  if (!isMvrError(error)) {
    io.stderr.write(`mvr: unexpected error: ${hideApiKeys((error as Error)?.stack ?? String(error))}\n`);
    return 1;
  }
  const exitCode = exitCodeOf(error.code);
  if (json) {
    const body: Record<string, unknown> = { ok: false, code: error.code, message: hideApiKeys(error.message) };
    if (error instanceof InvalidAuditsError) Object.assign(body, { problems: error.problems, problem_counts: error.byKind });
    io.stdout.write(`${JSON.stringify(body)}\n`);
    return exitCode;
  }
  if (error instanceof InvalidAuditsError) {
    for (const line of problemLines(error)) io.stderr.write(`${line}\n`);
  }
  io.stderr.write(`mvr: ${error.code}: ${hideApiKeys(error.message)}\n`);
  return exitCode;
}

/** Wraps a command body: runs it; its exit code is what it returns (0 if nothing), or its thrown error's. */
export async function runAction(io: CliIo, json: boolean, body: () => Promise<number | undefined>): Promise<number> {
  try {
    return (await body()) ?? 0;
  } catch (error) {
    return reportError(io, error, json);
  }
}
