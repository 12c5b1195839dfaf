import { snakeCaseMembers } from '../../presentation/json-members.ts';
import { runAction } from '../cli-output.ts';
import { defineCommand } from '../command.ts';
import { commandOptions, storeSettingsOf } from '../config.ts';
import { createProgress } from '../progress.ts';

const options = commandOptions('records', 'progressMs');

export default defineCommand({
  meta: {
    name: 'pull',
    description:
      "Fetch the kept list and each kept build's manifest and index from a bucket into an empty records folder, so a build on a fresh machine (CI) keeps the published history and writes the change feed",
  },
  args: {
    ...options.describe({ records: 'an empty records folder to pull into' }),
    from: {
      type: 'string',
      description: 'where the builds are published: s3://BUCKET/PREFIX (as given to mvr publish --to)',
      required: true,
    },
    json: { type: 'boolean', description: 'print the summary as JSON on stdout' },
  },
  run: ({ args, io }) =>
    runAction(io, Boolean(args.json), async () => {
      const config = options.resolve(args, io.env);
      const [{ pullKeptBuilds }, { openStore }, { publishedBuildsOf }] = await Promise.all([
        import('../../builder/pull.ts'),
        import('../../storage/open.ts'),
        import('../../storage/store.ts'),
      ]);
      const from = openStore(storeSettingsOf(args.from, io.env, { bulk: true, flag: '--from' }));
      // Only a store builds are published to can be pulled from (a usage error otherwise).
      publishedBuildsOf(from, '--from');
      const progress = createProgress({ command: 'pull', json: Boolean(args.json), intervalMs: config.progressMs, stream: io.stderr });
      try {
        const s = await pullKeptBuilds({
          recordsDir: config.records,
          from,
          onProgress: (p) =>
            progress.update({
              text: `${p.builds} of ${p.total} kept builds, ${(p.bytes / 1e6).toFixed(1)} MB`,
              fields: { builds: p.builds, total: p.total, bytes: p.bytes },
            }),
        });
        progress.finish();
        progress.stop();
        if (args.json) io.stdout.write(`${JSON.stringify(snakeCaseMembers({ ok: true, ...s }))}\n`);
        else
          io.stdout.write(
            `pulled ${s.builds} kept build${s.builds === 1 ? '' : 's'} (manifests and indexes, ${(s.bytes / 1e6).toFixed(1)} MB; live ${s.live}) from ${s.from} into ${s.to}\n`,
          );
      } finally {
        progress.stop();
        await from.close();
      }
    }),
});
