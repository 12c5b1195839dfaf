import { execFile } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { promisify } from 'node:util';
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
  /** CPU time of one pair in a process of its own (./ed25519-cpu.mjs), in microseconds: the reference for a build's CPU time a record. */
  pairCpuUs: number;
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
  const { pairUs } = JSON.parse(
    (await promisify(execFile)(process.execPath, [new URL('./ed25519-cpu.mjs', import.meta.url).pathname])).stdout,
  ) as { pairUs: number };
  return { threads, signPerSecond, verifyPerSecond, pairPerSecond: 1 / (1 / signPerSecond + 1 / verifyPerSecond), pairCpuUs: pairUs };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(await measureEd25519Capacity());
}
