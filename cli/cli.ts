import { defineCommand, runMain } from './command.ts';

/** `mvr`: each subcommand is a thin layer in cli/commands that maps flags to library options. */
const main = defineCommand({
  meta: { name: 'mvr', description: 'merchant-verify: signed merchant verification records' },
  subCommands: {
    keygen: () => import('./commands/keygen.ts').then((m) => m.default),
    build: () => import('./commands/build.ts').then((m) => m.default),
    apikey: () => import('./commands/apikey.ts').then((m) => m.default),
    serve: () => import('./commands/serve.ts').then((m) => m.default),
    dev: () => import('./commands/dev.ts').then((m) => m.default),
    publish: () => import('./commands/publish.ts').then((m) => m.default),
    pull: () => import('./commands/pull.ts').then((m) => m.default),
    changes: () => import('./commands/changes.ts').then((m) => m.default),
    log: () => import('./commands/log.ts').then((m) => m.default),
    verify: () => import('./commands/verify.ts').then((m) => m.default),
    mcp: () => import('./commands/mcp.ts').then((m) => m.default),
    witness: () => import('./commands/witness.ts').then((m) => m.default),
  },
});

await runMain(main);
