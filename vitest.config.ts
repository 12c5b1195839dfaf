import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Tests start real gateways, worker threads and child processes; forks keep each file's
    // process state (signals, cwd, env) its own.
    pool: 'forks',
    // One file at a time on this 2-core machine (Vitest's default, cores - 1). Two at a time was
    // faster, but a file that builds records beside one that runs three gateways against the S3
    // test server starved the gateways' 2 s polls, and the cluster test saw 503s it should not.
    maxWorkers: 1,
  },
});
