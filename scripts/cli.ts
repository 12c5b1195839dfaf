import { defineCommand, runMain } from 'citty';

/** `mvr`: each subcommand is a thin layer in scripts/commands that maps flags to library options. */
const main = defineCommand({
  meta: { name: 'mvr', version: '0.1.0', description: 'merchant-verify: signed merchant verification records' },
  subCommands: {
    keygen: () => import('./commands/keygen.ts').then((m) => m.default),
    build: () => import('./commands/build.ts').then((m) => m.default),
  },
});

await runMain(main);
