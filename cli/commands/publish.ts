import type { PublishProgress } from '../../builder/publish-objects.ts';
import { ConfigError } from '../../core/errors/errors.ts';
import { snakeCaseMembers } from '../../presentation/json-members.ts';
import { runAction } from '../cli-output.ts';
import { defineCommand } from '../command.ts';
import { commandOptions, storeSettingsOf } from '../config.ts';
import { createProgress, type ProgressState } from '../progress.ts';
import { witnessList, witnessProgress } from './build.ts';

/** The options `mvr publish` reads. */
export const PUBLISH_OPTIONS = ['records', 'public', 'to', 'concurrency', 'partMib', 'progressMs', 'witnessPolicy'] as const;
const options = commandOptions(...PUBLISH_OPTIONS);

/** A progress line: objects and bytes done (sent or up already), and the time left at the rate so far. */
export function publishProgress(p: PublishProgress): ProgressState {
  const mb = (n: number) => (n / 1e6).toFixed(1);
  const left = p.secondsLeft === null ? '' : `, about ${Math.ceil(p.secondsLeft)} s left`;
  return {
    text: `${p.objects.toLocaleString('en-US')} of ${p.totalObjects.toLocaleString('en-US')} objects, ${mb(p.bytes)} of ${mb(p.totalBytes)} MB${p.skipped ? ` (${p.skipped.toLocaleString('en-US')} up already)` : ''}${left}`,
    fields: {
      objects: p.objects,
      total_objects: p.totalObjects,
      bytes: p.bytes,
      total_bytes: p.totalBytes,
      uploaded: p.uploaded,
      skipped: p.skipped,
      ...(p.secondsLeft === null ? {} : { seconds_left: Math.ceil(p.secondsLeft) }),
    },
  };
}

export default defineCommand({
  meta: {
    name: 'publish',
    description:
      'Upload the live build (packs, domain map, statement, change feeds, kept list, key set, manifest; not the per-record files) and any kept build the bucket lacks to a private S3 bucket, in parallel, skipping what is up already; the object naming the live build is written last',
  },
  args: {
    ...options.describe({ records: 'records folder holding the live build' }),
    json: { type: 'boolean', description: 'print the summary as JSON on stdout' },
  },
  run: ({ args, io }) =>
    runAction(io, Boolean(args.json), async () => {
      const config = options.resolve(args, io.env);
      if (!config.to) throw new ConfigError('--to (or MVR_PUBLISH_TO) is required: s3://BUCKET/PREFIX');
      const [{ uploadBuild }, { openStore }, { readWitnessPolicy }] = await Promise.all([
        import('../../builder/publish.ts'),
        import('../../storage/open.ts'),
        import('../../witness/build-phase/witnessing.ts'),
      ]);
      const witnessing = await readWitnessPolicy(config.witnessPolicy);
      const to = openStore(storeSettingsOf(config.to, io.env, { publicDir: config.public, bulk: true, flag: '--to' }));
      const progress = createProgress({ command: 'publish', json: Boolean(args.json), intervalMs: config.progressMs, stream: io.stderr });
      try {
        const s = await uploadBuild({
          recordsDir: config.records,
          publicDir: config.public,
          to,
          witnessing,
          concurrency: config.concurrency,
          partBytes: config.partMib * 1024 ** 2,
          onWitness: (report) => progress.update(witnessProgress(report), true),
          onProgress: (p) => progress.update(publishProgress(p)),
        });
        progress.finish();
        progress.stop();
        if (args.json) io.stdout.write(`${JSON.stringify(snakeCaseMembers({ ok: true, ...s }))}\n`);
        else {
          const earlier =
            s.earlierBuilds > 0 ? `, with ${s.earlierBuilds} earlier kept build${s.earlierBuilds === 1 ? '' : 's'} the bucket lacked` : '';
          io.stdout.write(
            `published build ${s.build} (${s.records.toLocaleString('en-US')} records, ${s.objects.toLocaleString('en-US')} objects, ${(s.bytes / 1e6).toFixed(1)} MB${earlier}; ${s.uploaded.toLocaleString('en-US')} sent, ${s.skipped.toLocaleString('en-US')} up already) to ${s.to} in ${s.seconds.toFixed(1)} s; it is live${s.witnesses ? `; witnesses: ${witnessList(s.witnesses)}` : ''}\n`,
          );
        }
      } finally {
        progress.stop();
        await to.close();
      }
    }),
});
