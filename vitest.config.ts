import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Tests start real gateways, worker threads and child processes; forks keep each file's
    // process state (signals, cwd, env) its own.
    pool: 'forks',
    // Two files at a time on this 2-core machine (Vitest's default is cores - 1, so one): most
    // files spend their time waiting on child processes, sockets and disk, not on the CPU.
    maxWorkers: 2,
  },
});
