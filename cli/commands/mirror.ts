import { ConfigError } from '../../core/errors/errors.ts';
import { runAction } from '../cli-output.ts';
import { defineCommand } from '../command.ts';
import { commandOptions, storeSettingsOf } from '../config.ts';
import { createProgress } from '../progress.ts';
import { readTrustedKeys } from '../trust-options.ts';
import { witnessOptionsOf } from '../witness-policy.ts';

const options = commandOptions('apiKey', 'trustedKeys', 'progressMs');

export default defineCommand({
  meta: {
    name: 'mirror',
    description:
      "Fetch a bucket's or a gateway's live build into a folder and make it the folder's live build only when every check holds: statement, packs, records, domain map, log",
  },
  args: {
    from: {
      type: 'string',
      description: 's3://BUCKET/PREFIX (as mvr publish fills it) or a gateway base URL (with an API key of the mirror scope)',
      required: true,
    },
    to: {
      type: 'string',
      description: 'the mirror folder: a records folder that mvr serve --records and mvr verify --mirror answer from',
      required: true,
    },
    ...options.describe({
      apiKey: 'with a gateway: an API key of the mirror scope (mvr apikey create --scope mirror)',
      trustedKeys:
        'the record keys trusted (a JWK Set file); required: the statement and every record must be signed by one, or by a key one endorsed',
    }),
    'log-key': {
      type: 'string',
      description: "the log's verifier key, a file or URL (default: the --policy's log line, else the log key the source publishes)",
    },
    policy: {
      type: 'string',
      description: "a tlog-policy file: the checkpoint the build's statement is proven against must be cosigned by its quorum",
    },
    'max-age': { type: 'string', description: 'with --policy: cosignatures older than this do not count, e.g. 36h, 90m, 2d' },
    'allow-rollback': {
      type: 'boolean',
      description:
        "take the source's build although it is earlier in the log than the mirror's live build, or its checkpoint does not extend the one the live build was proven against (without it: MIRROR_REFUSED, the live build stays)",
    },
    json: { type: 'boolean', description: 'print the summary as JSON on stdout (progress lines as JSON on stderr)' },
  },
  run: ({ args, io }) =>
    runAction(io, Boolean(args.json), async () => {
      const config = options.resolve(args, io.env);
      if (!config.trustedKeys)
        throw new ConfigError(
          '--trusted-keys FILE (or MVR_TRUSTED_KEYS) is required: a copy of the published key set whose keys the mirror trusts, since a bucket or a gateway could serve any key set',
        );
      const [{ mirrorBuild }, { openMirrorSource }, { readFileOrUrl }] = await Promise.all([
        import('../../mirror/mirror.ts'),
        import('../../mirror/source.ts'),
        import('../../clients/file-or-url.ts'),
      ]);
      const trustedKeys = await readTrustedKeys(config.trustedKeys);
      const witness = await witnessOptionsOf(args);
      const logKey = args['log-key'] ? (await readFileOrUrl(args['log-key'])).toString('utf8').trim() : undefined;
      const source = openMirrorSource(args.from, {
        ...(/^s3:\/\//i.test(args.from) ? { store: storeSettingsOf(args.from, io.env, { bulk: true, flag: '--from' }) } : {}),
        apiKey: config.apiKey,
      });
      const progress = createProgress({ command: 'mirror', json: Boolean(args.json), intervalMs: config.progressMs, stream: io.stderr });
      // Ctrl-C or SIGTERM: the run stops before its build goes live (INTERRUPTED, exit 130); what it fetched stays for the next run.
      const interrupt = new AbortController();
      const onSignal = (signal: NodeJS.Signals) => (interrupt.signal.aborted ? process.exit(130) : interrupt.abort(signal));
      process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
      const started = Date.now();
      try {
        const s = await mirrorBuild({
          to: args.to,
          source,
          trustedKeys,
          logKey,
          ...witness,
          allowRollback: Boolean(args['allow-rollback']),
          signal: interrupt.signal,
          onProgress: (p) => {
            const elapsed = (Date.now() - started) / 1000;
            const left = p.bytes > 0 ? ((p.bytesToFetch - p.bytes) * elapsed) / p.bytes : null;
            progress.update({
              text: `build ${p.build}: ${p.packs} of ${p.totalPacks} packs, ${(p.bytes / 1e6).toFixed(1)} of ${(p.bytesToFetch / 1e6).toFixed(1)} MB fetched, ${p.records.toLocaleString('en-US')} records verified${left === null ? '' : `, about ${Math.ceil(left)} s left`}`,
              fields: {
                build: p.build,
                packs: p.packs,
                total_packs: p.totalPacks,
                bytes: p.bytes,
                bytes_to_fetch: p.bytesToFetch,
                records_verified: p.records,
                ...(left === null ? {} : { seconds_left: Math.ceil(left) }),
              },
            });
          },
        });
        progress.finish();
        progress.stop();
        if (args.json)
          io.stdout.write(
            `${JSON.stringify({
              ok: true,
              build: s.build,
              unchanged: s.unchanged,
              ...(s.rolledBackFrom ? { rolled_back_from: s.rolledBackFrom } : {}),
              from: s.from,
              to: s.to,
              records: s.records,
              packs_fetched: s.packs.fetched,
              packs_reused: s.packs.reused,
              bytes: s.bytes,
              records_verified: s.recordsVerified,
              seconds: s.seconds,
            })}\n`,
          );
        else if (s.unchanged) io.stdout.write(`build ${s.build} is the mirror's live build already: nothing fetched (${s.to})\n`);
        else
          io.stdout.write(
            `mirrored build ${s.build} from ${s.from} into ${s.to}: ${s.records.toLocaleString('en-US')} records verified, ${s.packs.fetched} packs fetched (${(s.bytes / 1e6).toFixed(1)} MB), ${s.packs.reused} reused, in ${s.seconds.toFixed(1)} s; it is live${s.rolledBackFrom ? `, rolled back from build ${s.rolledBackFrom} (--allow-rollback)` : ''}\n`,
          );
      } finally {
        process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
        progress.stop();
        await source.close();
      }
    }),
});
