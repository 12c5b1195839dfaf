import { defineCommand, runCommandLine } from './command.ts';
import type { CliIo } from './io.ts';

/**
 * `mvr`: each subcommand is a thin layer in cli/commands that maps flags to library options. The
 * tree is also what docs/cli.md is generated from (cli/reference.ts).
 */
export const mvrCommand = defineCommand({
  meta: { name: 'mvr', description: 'merchant-verify: signed merchant verification records' },
  subCommands: {
    init: () => import('./commands/init.ts').then((m) => m.default),
    keygen: () => import('./commands/keygen.ts').then((m) => m.default),
    build: () => import('./commands/build.ts').then((m) => m.default),
    apikey: () => import('./commands/apikey.ts').then((m) => m.default),
    serve: () => import('./commands/serve.ts').then((m) => m.default),
    dev: () => import('./commands/dev.ts').then((m) => m.default),
    publish: () => import('./commands/publish.ts').then((m) => m.default),
    pull: () => import('./commands/pull.ts').then((m) => m.default),
    mirror: () => import('./commands/mirror.ts').then((m) => m.default),
    changes: () => import('./commands/changes.ts').then((m) => m.default),
    log: () => import('./commands/log.ts').then((m) => m.default),
    verify: () => import('./commands/verify.ts').then((m) => m.default),
    mcp: () => import('./commands/mcp.ts').then((m) => m.default),
    witness: () => import('./commands/witness.ts').then((m) => m.default),
  },
});

/**
 * The CLI's one entry point: runs the command line `argv` (without `node` and the script) with
 * `io` and resolves with the exit code. The bin calls it with the process's own environment and
 * streams; the tests with captured ones. A server (`serve`, `dev`, `mcp`, `witness`) resolves
 * once it is listening and keeps the process alive, stopping on its signals.
 */
export function runMvr(argv: string[], io: CliIo): Promise<number> {
  return runCommandLine(mvrCommand, argv, io);
}
