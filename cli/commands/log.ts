import { join } from 'node:path';
import { checkLogGrowth, pullLog } from '../../builder/log-monitor.ts';
import { readFileOrUrl } from '../../clients/file-or-url.ts';
import { logLocation } from '../../clients/log-client.ts';
import { ConfigError, exitCodeOf, isMvrError } from '../../core/errors/errors.ts';
import { writeAtomic } from '../../core/files.ts';
import { LOG_DIR } from '../../core/layout.ts';
import { witnessedJson, witnessedText } from '../../core/rules/witnessed.ts';
import { parseVkey } from '../../keyring/log-key.ts';
import { snakeCaseMembers } from '../../presentation/json-members.ts';
import type { LogWitnessSummary } from '../../witness/build-phase/refresh.ts';
import type { WitnessReport } from '../../witness/build-phase/witnessing.ts';
import { runAction } from '../cli-output.ts';
import { defineCommand } from '../command.ts';
import { commandOptions, storeSettingsOf } from '../config.ts';
import { witnessOptionsOf } from '../witness-policy.ts';
import { witnessList, witnessProgress } from './build.ts';

const options = commandOptions('public', 'baseUrl');

const check = defineCommand({
  meta: {
    name: 'check',
    description:
      'Check that the live log is an append-only extension of an older checkpoint (a consistency proof computed from the tiles): what a monitor runs each month',
  },
  args: {
    ...options.args,
    checkpoint: { type: 'string', description: 'the older checkpoint, a file saved from <log>/checkpoint', required: true },
    log: {
      type: 'string',
      description: 'the log: a URL prefix (https://HOST/log) or a folder (default <base-url>/log, else <public>/log)',
    },
    'log-key': {
      type: 'string',
      description: "the log's verifier key, a file or URL (default the log's /.well-known/merchant-verify-log.vkey)",
    },
    update: { type: 'boolean', description: 'after a successful check, save the live checkpoint over --checkpoint (for next time)' },
    policy: { type: 'string', description: 'a tlog-policy file: the live checkpoint must also be cosigned by its quorum' },
    'max-age': { type: 'string', description: 'with --policy: cosignatures older than this do not count, e.g. 36h, 90m, 2d' },
    json: { type: 'boolean', description: 'print a machine-readable result' },
  },
  run: ({ args, io }) =>
    runAction(io, Boolean(args.json), async () => {
      const config = options.resolve(args, io.env);
      const witness = await witnessOptionsOf(args);
      const where = args.log ?? (config.baseUrl ? `${config.baseUrl.replace(/\/+$/, '')}/${LOG_DIR}` : join(config.public, LOG_DIR));
      const log = logLocation(where);
      const vkeySource = args['log-key'] ?? log.defaultVkey;
      const vkey = parseVkey((await readFileOrUrl(vkeySource)).toString('utf8'), vkeySource);
      const older = await readFileOrUrl(args.checkpoint).catch((error: Error) => {
        throw new ConfigError(`--checkpoint: ${error.message}`);
      });
      const growth = await checkLogGrowth(
        log,
        where,
        vkey,
        { text: older.toString('utf8'), from: args.checkpoint },
        witness && { ...witness, now: Date.now() },
      );
      if (args.update) await writeAtomic(args.checkpoint, growth.liveNote);
      const result = {
        consistent: true,
        origin: growth.origin,
        from: growth.from,
        to: growth.to,
        root: growth.root,
        updated: Boolean(args.update),
        ...(growth.witnessed ? { witnessed: witnessedJson(growth.witnessed) } : {}),
      };
      if (args.json) io.stdout.write(`${JSON.stringify(result)}\n`);
      else
        io.stdout.write(
          `consistent: ${growth.origin} grew from ${growth.from.toLocaleString('en-US')} to ${growth.to.toLocaleString('en-US')} entries; nothing before entry ${growth.from} changed${args.update ? `; ${args.checkpoint} now holds the live checkpoint` : ''}${growth.witnessed ? `\nwitnessed: ${witnessedText(growth.witnessed)}` : ''}\n`,
        );
    }),
});

const pull = defineCommand({
  meta: {
    name: 'pull',
    description:
      "Fetch a published log's checkpoint and right edge (its partial tiles) into <public>/log, so a build on a fresh machine (CI) can extend it",
  },
  args: {
    ...options.args,
    from: { type: 'string', description: 'the published log: a URL prefix (https://HOST/log) or a folder', required: true },
    json: { type: 'boolean', description: 'print a machine-readable result' },
  },
  run: ({ args, io }) =>
    runAction(io, Boolean(args.json), async () => {
      const { public: publicDir } = options.resolve(args, io.env);
      const { to: target, size, files } = await pullLog(logLocation(args.from), publicDir);
      const result = { from: args.from, to: target, size, files };
      if (args.json) io.stdout.write(`${JSON.stringify(result)}\n`);
      else io.stdout.write(`pulled the log at size ${size.toLocaleString('en-US')} (${files} files) into ${target}\n`);
    }),
});

const witnessOptions = commandOptions('records', 'public', 'to', 'witnessPolicy');

const witness = defineCommand({
  meta: {
    name: 'witness',
    description:
      "Re-submit the live checkpoint to the policy's witnesses for fresh cosignatures and write them where it is served: the live build and public/log, or with --to the bucket's live build",
  },
  args: {
    ...witnessOptions.args,
    policy: {
      type: 'string',
      description: 'the tlog-policy file naming the witnesses and the quorum (default --witness-policy, MVR_WITNESS_POLICY)',
    },
    json: { type: 'boolean', description: 'print a machine-readable result' },
  },
  run: ({ args, io }) =>
    runAction(io, Boolean(args.json), async () => {
      const config = witnessOptions.resolve(args, io.env);
      const file = args.policy ?? config.witnessPolicy;
      if (!file) throw new ConfigError('--policy FILE (or MVR_WITNESS_POLICY) is required: the tlog-policy naming the witnesses');
      // Messages name the way the file was given, as typed.
      const flag =
        args.policy !== undefined
          ? '--policy'
          : (args as Record<string, unknown>)['witness-policy'] !== undefined
            ? '--witness-policy'
            : 'MVR_WITNESS_POLICY';
      const [{ readWitnessPolicy }, { summaryOf, witnessLiveBucket, witnessLiveFolder }, { openStore }] = await Promise.all([
        import('../../witness/build-phase/witnessing.ts'),
        import('../../witness/build-phase/refresh.ts'),
        import('../../storage/open.ts'),
      ]);
      const witnessing = await readWitnessPolicy(file, undefined, flag);
      if (!witnessing) throw new ConfigError(`${flag} ${file} says "quorum none": there is nothing to ask the witnesses`);
      const report = (r: WitnessReport) => {
        if (!args.json) io.stderr.write(`mvr log witness: ${witnessProgress(r).text}\n`);
      };
      let result: LogWitnessSummary;
      try {
        if (config.to) {
          const to = openStore(storeSettingsOf(config.to, io.env, { publicDir: config.public, flag: '--to' }));
          try {
            result = await witnessLiveBucket(witnessing, to, report);
          } finally {
            await to.close();
          }
        } else result = await witnessLiveFolder(witnessing, { recordsDir: config.records, publicDir: config.public }, report);
      } catch (error) {
        // Short of a fresh quorum: the exit code alerts, and --json still says who answered and how.
        const summary = summaryOf(error);
        if (!summary || !isMvrError(error) || !args.json) throw error;
        io.stdout.write(`${JSON.stringify(snakeCaseMembers({ ok: false, code: error.code, message: error.message, ...summary }))}\n`);
        return exitCodeOf(error.code);
      }
      if (args.json) io.stdout.write(`${JSON.stringify(snakeCaseMembers({ ok: true, ...result }))}\n`);
      else
        io.stdout.write(
          `witnessed the checkpoint of size ${result.size}: ${witnessList(result.witnesses)}; written to ${result.written.join(', ')}\n`,
        );
      return 0;
    }),
});

export default defineCommand({
  meta: { name: 'log', description: 'The public transparency log of every record' },
  subCommands: { check, pull, witness },
});
