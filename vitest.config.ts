import { defineConfig } from 'vitest/config';

/**
 * Files that must have the machine to themselves: three gateway processes polling the S3 test
 * server every ~2 s with a 2 s limit per request. Beside a file that builds records in the
 * other worker they were starved, their polls timed out and they answered 503 outside the
 * outage the test stages. They run last, one at a time, after every other file.
 */
const ALONE = ['test/scale/cluster.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Tests start real gateways, worker threads and child processes; forks keep each file's
    // process state (signals, cwd, env) its own.
    pool: 'forks',
    projects: [
      {
        extends: true,
        // Two files at a time (Vitest's default on this 2-core machine is cores - 1 = 1): most
        // files wait on child processes, sockets and the disk, so two overlap well.
        test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: ALONE, maxWorkers: 2, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: { name: 'alone', include: ALONE, maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
