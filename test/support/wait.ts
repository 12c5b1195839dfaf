/**
 * Bounded waits on a condition, for tests: they end as soon as the condition holds, so a test
 * waits for an event, never for a fixed time. (A fixed `sleep` is only for short gaps, well
 * under a second.)
 */
import type { ChildProcess } from 'node:child_process';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Calls `fn` until `done(value)` holds, every `intervalMs`, for at most `timeoutMs`; returns the
 * value and how long it took. Throws with the last value on time-out.
 */
export async function poll<T>(
  fn: () => Promise<T>,
  done: (value: T) => boolean,
  { timeoutMs = 5000, intervalMs = 20 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<{ value: T; elapsedMs: number }> {
  const started = performance.now();
  for (;;) {
    const value = await fn();
    const elapsedMs = performance.now() - started;
    if (done(value)) return { value, elapsedMs };
    if (elapsedMs > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms; last value: ${shown(value)}`);
    await sleep(intervalMs);
  }
}

/** Polls `check` until it returns true (bounded); `what` names the wait in the error. */
export async function waitFor(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 5000): Promise<void> {
  await poll(
    async () => check(),
    (ok) => ok,
    { timeoutMs, intervalMs: 25 },
  ).catch(() => {
    throw new Error(`timed out waiting for ${what}`);
  });
}

/** A value for an error message: an HTTP reply as its status and the start of its body. */
function shown(value: unknown): string {
  const reply = value as { status?: unknown; text?: unknown } | undefined;
  if (typeof reply?.status === 'number' && typeof reply.text === 'string') return `${reply.status} ${reply.text.slice(0, 300)}`;
  return JSON.stringify(value);
}

/**
 * `child`'s exit code once it has exited, waiting at most `timeoutMs`. A process that does not
 * exit fails the test here, naming `what` and showing the end of `output()`, rather than holding
 * the test until its own time-out with nothing to show.
 */
export function waitForExit(
  child: ChildProcess,
  what: string,
  output: () => string = () => '',
  timeoutMs = 15_000,
): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${what}: still running after ${timeoutMs} ms; its output ends:\n${output().slice(-3000)}`)),
      timeoutMs,
    );
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

/**
 * `child`'s exit code and signal once it has exited and its output has closed, waiting at most
 * `timeoutMs` (under the test time-out): past it the child is killed and the test fails here,
 * naming `what` and showing the end of `output()`.
 */
export function waitForClose(
  child: ChildProcess,
  what: string,
  output: () => string = () => '',
  timeoutMs = 50_000,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${what}: still running after ${timeoutMs} ms; its output ends:\n${output().slice(-3000)}`));
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal });
    });
  });
}

/**
 * `work`'s value, waiting at most `timeoutMs`: past it the test fails here, naming `what` and
 * showing the end of `output()` (the work itself goes on; only a process can be killed).
 */
export function settleWithin<T>(work: Promise<T>, what: string, output: () => string = () => '', timeoutMs = 50_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what}: still running after ${timeoutMs} ms; its output ends:\n${output().slice(-3000)}`)),
      timeoutMs,
    );
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
