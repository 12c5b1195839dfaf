/**
 * What a soak run started, and how it is stopped once, whatever ends it: the run's end, a crash,
 * Ctrl-C or SIGTERM, the watchdog, or the process exiting some other way. Never leaves the gateway
 * or the temp folder behind.
 */
import { rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { Pool } from 'undici';
import type { GatewayProcess } from './gateway-process.ts';
import type { HeapInspector } from './inspector.ts';
import type { RssSampler } from './rss.ts';
import type { VerifyPool } from './verify-pool.ts';
import type { SoakWitnesses } from './witnesses.ts';

export const log = (s: string) => process.stderr.write(`soak: ${s}\n`);

export const state: {
  dir: string | null;
  gateway: GatewayProcess | null;
  pool: Pool | null;
  sampler: RssSampler | null;
  verifiers: VerifyPool | null;
  inspector: HeapInspector | null;
  witnesses: SoakWitnesses | null;
  /** `mvr mirror` runs in flight (mirrors.ts), killed if the soak stops under them. */
  children: Set<{ kill(): void }>;
} = { dir: null, gateway: null, pool: null, sampler: null, verifiers: null, inspector: null, witnesses: null, children: new Set() };
export const stop = new AbortController();

let cleaning: Promise<void> | null = null;
/** Stops everything this run started, once: load, sampler, connections, the gateway, the temp folder. */
export function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    stop.abort();
    if (state.gateway) state.gateway.stopping = true;
    await state.sampler?.stop().catch(() => undefined);
    state.inspector?.close();
    await state.pool?.destroy().catch(() => undefined);
    await state.verifiers?.close().catch(() => undefined);
    for (const child of state.children) child.kill();
    await state.witnesses?.close().catch(() => undefined);
    await state.gateway?.stop().catch(() => undefined);
    if (state.dir) {
      const dir = state.dir;
      await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 })
        .then(() => (state.dir = null))
        .catch((error: Error) => log(`could not remove ${dir}: ${error.message}`));
    }
  })();
  return cleaning;
}

let signalled: NodeJS.Signals | null = null;
/** The signal that stopped the run, if one did. */
export const signalledBy = () => signalled;
export const signalExit = () => (signalled === 'SIGTERM' ? 143 : 130);

/** Stops the run (cleanup, then exit) on exit, SIGINT, SIGTERM, or once `budgetMs` has passed (the watchdog it returns). */
export function guardProcess(budgetMs: number): NodeJS.Timeout {
  // Last resort when the process ends some other way: never leave the gateway or the folder behind.
  process.on('exit', () => {
    state.gateway?.killNow();
    for (const child of state.children) child.kill();
    if (state.dir) {
      try {
        rmSync(state.dir, { recursive: true, force: true });
      } catch {
        // nothing more to do
      }
    }
  });
  // Ctrl-C reaches this process twice (from the terminal, and relayed by tsx's parent process):
  // the first signal starts the cleanup, later ones must not cut it short.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (signalled) return;
      signalled = signal;
      log(`${signal}: stopping, killing the gateway and removing the temp folder`);
      setTimeout(() => process.exit(signalExit()), 20_000).unref();
      cleanup().finally(() => process.exit(signalExit()));
    });
  }
  // Every phase is bounded on its own; this bounds the whole run too, whatever happens.
  const watchdog = setTimeout(() => {
    log(`watchdog: the soak overran its ${Math.round(budgetMs / 1000)} s budget; stopping`);
    cleanup().finally(() => process.exit(1));
  }, budgetMs);
  watchdog.unref();
  return watchdog;
}
