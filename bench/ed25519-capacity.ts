import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/**
 * The machine's raw Ed25519 capacity with node:crypto (OpenSSL): signatures and verifications
 * per second on all cores at once (one worker thread per core), over a record-sized message.
 * The build's rate is reported as a ratio of the sign+verify pair rate measured here.
 */
export interface Ed25519Capacity {
  threads: number;
  signPerSecond: number;
  verifyPerSecond: number;
  /** One signature plus one verification, the build's crypto per record. */
  pairPerSecond: number;
}

interface ThreadResult {
  signs: number;
  verifies: number;
  signMs: number;
  verifyMs: number;
}

/** Runs the measurement on `threads` worker threads at once for about `seconds`. */
export async function measureEd25519Capacity(seconds = 4, threads = availableParallelism()): Promise<Ed25519Capacity> {
  const results = await Promise.all(
    Array.from(
      { length: threads },
      () =>
        new Promise<ThreadResult>((resolve, reject) => {
          const w = new Worker(new URL('./ed25519-worker.mjs', import.meta.url), { workerData: { seconds } });
          w.once('message', resolve);
          w.once('error', reject);
        }),
    ),
  );
  const signPerSecond = results.reduce((n, r) => n + r.signs / (r.signMs / 1000), 0);
  const verifyPerSecond = results.reduce((n, r) => n + r.verifies / (r.verifyMs / 1000), 0);
  return { threads, signPerSecond, verifyPerSecond, pairPerSecond: 1 / (1 / signPerSecond + 1 / verifyPerSecond) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(await measureEd25519Capacity());
}
