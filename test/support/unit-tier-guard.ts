/**
 * The unit tier's set-up file: in its processes, starting a child process or listening on a socket
 * throws, naming the tier rule. A test file that does either belongs to the end-to-end tier; the
 * reading in ./tiers.ts sorts it there by what its text calls, and this makes a wrong sort loud.
 */
import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import { Server } from 'node:net';

const refuse = (what: string) => () => {
  throw new Error(`the unit tier starts no ${what}: this test file belongs to the end-to-end tier (test/support/tiers.ts)`);
};

for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const)
  (childProcess as unknown as Record<string, unknown>)[name] = refuse(`child process (${name})`);
syncBuiltinESMExports();
Server.prototype.listen = refuse('server (listen)') as unknown as typeof Server.prototype.listen;
