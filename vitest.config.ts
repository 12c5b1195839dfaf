import { defineConfig } from 'vitest/config';
import { useScratchFolder } from './test/support/scratch.ts';
import { unitTestFiles } from './test/support/tiers.ts';

// Temporary files on a RAM-backed file system when there is one (see test/support/scratch.ts).
useScratchFolder();

/**
 * Files that must have the machine to themselves: three gateway processes polling the S3 test
 * server every ~2 s with a 2 s limit per request. Beside a file that builds records in the
 * other worker they were starved, their polls timed out and they answered 503 outside the
 * outage the test stages. They run last, one at a time, after every other file.
 */
const ALONE = ['test/scale/cluster.test.ts'];

/** The plain test project, built once for the run (by the first project to start) and copied by every makeProject(). */
const globalSetup = ['test/support/plain-project.ts'];

/**
 * The unit tier (`npm run test:unit`, Vitest's project `unit`): the files that run in the test
 * process only, read from their text (test/support/tiers.ts); its set-up refuses a child process or
 * a listening socket. It runs first; the end-to-end tier (every other file) after it.
 */
const UNIT = unitTestFiles(import.meta.dirname);

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Tests start real gateways, worker threads and child processes: they run in child
    // processes of their own (forks), not in threads of Vitest's.
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: UNIT,
          maxWorkers: 2,
          isolate: false,
          globalSetup,
          setupFiles: ['test/support/unit-tier-guard.ts'],
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        // Two files at a time (Vitest's default on this 2-core machine is cores - 1 = 1): most
        // files wait on child processes, sockets and the disk, so two overlap well. The two
        // processes are kept from file to file (isolate: false), so each loads the gateway, the
        // SDKs and the test support once, not once per file; no test changes process-wide state
        // (env, cwd, signal handlers, globals), and every file closes what it starts.
        test: {
          name: 'end-to-end',
          include: ['test/**/*.test.ts'],
          exclude: [...ALONE, ...UNIT],
          maxWorkers: 2,
          isolate: false,
          globalSetup,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: { name: 'alone', include: ALONE, maxWorkers: 1, globalSetup, sequence: { groupOrder: 2 } },
      },
    ],
  },
});
