import { defineCommand } from '../command.ts';
import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ConfigError, LogInconsistentError, MvrError } from '../../core/errors.ts';
import { LOG_CHECKPOINT, LOG_DIR } from '../../core/layout.ts';
import { partialPaths } from '../../core/tlog/appender.ts';
import { parseNote, type NoteVerifierKey } from '@merchant-verify/verifier/tlog';
import { parseTilePath } from '../../core/tlog/tiles.ts';
import { encodeBase64 } from '@merchant-verify/verifier/tlog';
import { parseCheckpoint, type Checkpoint } from '@merchant-verify/verifier/tlog';
import { TileTree } from '../../core/tlog/tile-tree.ts';
import { writeAtomic } from '../../core/files.ts';
import { openCheckpoint, parseVkey } from '../../keyring/log-key.ts';
import { hasher } from '../../core/hash.ts';
import { readFileOrUrl } from '../../clients/file-or-url.ts';
import { logLocation } from '../../clients/log-client.ts';
import { runAction } from '../cli-output.ts';
import { commandOptions } from '../config.ts';

const options = commandOptions('public', 'baseUrl');

const check = defineCommand({
  meta: {
    name: 'check',
    description: 'Check that the live log is an append-only extension of an older checkpoint (a consistency proof computed from the tiles): what a monitor runs each month',
  },
  args: {
    ...options.args,
    checkpoint: { type: 'string', description: 'the older checkpoint, a file saved from <log>/checkpoint', required: true },
    log: { type: 'string', description: 'the log: a URL prefix (https://HOST/log) or a folder (default <base-url>/log, else <public>/log)' },
    'log-key': { type: 'string', description: "the log's verifier key, a file or URL (default the log's /.well-known/merchant-verify-log.vkey)" },
    update: { type: 'boolean', description: 'after a successful check, save the live checkpoint over --checkpoint (for next time)' },
    json: { type: 'boolean', description: 'print a machine-readable result' },
  },
  run: ({ args }) =>
    runAction(Boolean(args.json), async () => {
      const config = options.resolve(args, process.env);
      const where = args.log ?? (config.baseUrl ? `${config.baseUrl.replace(/\/+$/, '')}/${LOG_DIR}` : join(config.public, LOG_DIR));
      const log = logLocation(where);
      const vkeySource = args['log-key'] ?? log.defaultVkey;
      const vkey = parseVkey((await readFileOrUrl(vkeySource)).toString('utf8'), vkeySource);
      const older = await readFileOrUrl(args.checkpoint).catch((error: Error) => {
        throw new ConfigError(`--checkpoint: ${error.message}`);
      });
      const old = openOlderCheckpoint(older.toString('utf8'), vkey, args.checkpoint);
      const liveNote = await log.checkpoint();
      const live = openCheckpoint(liveNote, vkey, `${where}/checkpoint`);
      if (live.size < old.size) throw new LogInconsistentError(`the live log has ${live.size} entries, fewer than the ${old.size} of ${args.checkpoint}: entries were removed`);
      const consistent = await new TileTree(hasher, live.size, log.tiles).extends(old, live.root).catch((error: Error) => {
        throw new LogInconsistentError(`cannot compute the consistency proof from the tiles at ${where}: ${error.message}`);
      });
      if (!consistent) throw new LogInconsistentError(`the live log (size ${live.size}) is NOT an append-only extension of ${args.checkpoint} (size ${old.size}): an entry was rewritten or removed`);
      if (args.update) await writeAtomic(args.checkpoint, liveNote);
      const result = { consistent: true, origin: live.origin, from: old.size, to: live.size, root: encodeBase64(live.root), updated: Boolean(args.update) };
      if (args.json) process.stdout.write(`${JSON.stringify(result)}\n`);
      else process.stdout.write(`consistent: ${live.origin} grew from ${old.size.toLocaleString('en-US')} to ${live.size.toLocaleString('en-US')} entries; nothing before entry ${old.size} changed${args.update ? `; ${args.checkpoint} now holds the live checkpoint` : ''}\n`);
    }),
});

/** The checkpoint a monitor saved: a file that is not one of this log is bad input (exit 3), never evidence against the log. */
function openOlderCheckpoint(note: string, vkey: NoteVerifierKey, file: string): Checkpoint {
  try {
    return openCheckpoint(note, vkey, file);
  } catch (error) {
    throw new MvrError('INVALID_CHECKPOINT', `--checkpoint ${(error as Error).message}`, { cause: error });
  }
}

const pull = defineCommand({
  meta: {
    name: 'pull',
    description: "Fetch a published log's checkpoint and right edge (its partial tiles) into <public>/log, so a build on a fresh machine (CI) can extend it",
  },
  args: {
    ...options.args,
    from: { type: 'string', description: 'the published log: a URL prefix (https://HOST/log) or a folder', required: true },
    json: { type: 'boolean', description: 'print a machine-readable result' },
  },
  run: ({ args }) =>
    runAction(Boolean(args.json), async () => {
      const { public: publicDir } = options.resolve(args, process.env);
      const source = logLocation(args.from);
      const target = join(publicDir, LOG_DIR);
      const note = await source.checkpoint();
      // Only the text is read here: the build opens the checkpoint with the log key and checks the tiles against it.
      const { size } = parseCheckpoint(parseNote(note).text);
      const local = await readFile(join(target, LOG_CHECKPOINT), 'utf8').catch(() => null);
      if (local !== null && local !== note) throw new ConfigError(`${target} already holds another log checkpoint; pull into a public folder without one`);
      const paths = partialPaths(size);
      for (const path of paths) {
        const bytes = await source.tiles(parseTilePath(path)!, path);
        await mkdir(dirname(join(target, path)), { recursive: true });
        await writeAtomic(join(target, path), bytes);
      }
      await writeAtomic(join(target, LOG_CHECKPOINT), note);
      const result = { from: args.from, to: target, size, files: paths.length + 1 };
      if (args.json) process.stdout.write(`${JSON.stringify(result)}\n`);
      else process.stdout.write(`pulled the log at size ${size.toLocaleString('en-US')} (${paths.length + 1} files) into ${target}\n`);
    }),
});

export default defineCommand({
  meta: { name: 'log', description: 'The public transparency log of every record' },
  subCommands: { check, pull },
});
