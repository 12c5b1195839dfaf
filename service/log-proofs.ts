import { readFile, readlink } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { NotInLogError, RecordUnavailableError, StoreUnavailableError } from '../core/errors.ts';
import { BUILD_CHECKPOINT_FILE, BUILDS_DIR, CURRENT_LINK, LOG_DIR, recordPath, SHARD_LOG_FILE } from '../core/layout.ts';
import { decodeBase64 } from '../core/tlog/base64.ts';
import { parseCheckpoint } from '../core/tlog/checkpoint.ts';
import { parseNote } from '../core/tlog/note.ts';
import { verifyInclusion } from '../core/tlog/merkle.ts';
import { formatTlogProof } from '../core/tlog/proof-text.ts';
import { TileTree } from '../core/tlog/tile-tree.ts';
import { folderTiles } from './log.ts';
import { hasher, sha256 } from './log-key.ts';
import { checkServeRule, type RecordsService } from './records.ts';
import { FolderRecordSource } from './sources/folder.ts';

/** A record and its C2SP tlog-proof, from one build. */
export interface ProvenRecord {
  build: string;
  record: Buffer;
  proof: string;
}

/** Shard entry lists kept in memory (each a few thousand lines at 1M records). */
const SHARDS_KEPT = 64;

/**
 * Inclusion proofs of live records in the transparency log (`GET /v1/proof`, MCP). A proof is
 * against the checkpoint the record's build signed, computed from the public tiles; the entry's
 * index and salt come from the build's `<shard>/log.jsonl`. The record must pass the serve rule,
 * and the proof is checked before it is given: a proof that would not verify is never served.
 * Needs the records folder and the public log folder on this machine.
 */
export class LogProofs {
  private readonly shards = new Map<string, Promise<Map<string, { index: number; salt: string }>>>();

  constructor(
    private readonly records: RecordsService,
    private readonly recordsDir: string,
    private readonly logDir: string,
  ) {}

  /** The proofs of a records service's folder; null when its records come from an origin or a bucket. */
  static of(records: RecordsService, publicDir: string): LogProofs | null {
    return records.source instanceof FolderRecordSource ? new LogProofs(records, records.source.recordsDir, join(publicDir, LOG_DIR)) : null;
  }

  async proofFor(domain: string): Promise<ProvenRecord> {
    const build = await this.liveBuild();
    const buildDir = join(this.recordsDir, BUILDS_DIR, build);
    const path = recordPath(domain);
    const record = await readFile(join(buildDir, path)).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') throw new NotInLogError(`${domain} has no record (never audited), so nothing of it is in the log`);
      throw new StoreUnavailableError(`cannot read the record of ${domain}: ${error.message}`);
    });
    checkServeRule(domain, record, this.records.keySet());
    const entry = (await this.shard(buildDir, build, path.slice(0, path.indexOf('/')))).get(domain);
    const checkpoint = await readFile(join(buildDir, BUILD_CHECKPOINT_FILE), 'utf8').catch(() => null);
    if (!entry || checkpoint === null) throw new NotInLogError(`build ${build} was made without a log key: its records are not in the log`);
    const salt = decodeBase64(entry.salt);
    const { size, root } = parseCheckpoint(parseNote(checkpoint).text);
    let proof: Uint8Array[];
    try {
      proof = await new TileTree(hasher, size, folderTiles(this.logDir)).inclusion(entry.index);
    } catch (error) {
      throw new RecordUnavailableError(`the log tiles for ${domain} cannot be read: ${(error as Error).message}`, { cause: error });
    }
    const leaf = hasher.leaf(sha256(Buffer.concat([salt ?? new Uint8Array(0), record])));
    if (!salt || !verifyInclusion(hasher, entry.index, size, leaf, proof, root)) {
      throw new RecordUnavailableError(`the log proof of ${domain} does not verify against build ${build}'s checkpoint; it is not served`);
    }
    return { build, record, proof: formatTlogProof({ extra: salt, index: entry.index, proof, checkpoint }) };
  }

  private async liveBuild(): Promise<string> {
    try {
      return basename(await readlink(join(this.recordsDir, CURRENT_LINK)));
    } catch (error) {
      throw new StoreUnavailableError(`no live build in ${this.recordsDir}: ${(error as Error).message}`);
    }
  }

  private shard(buildDir: string, build: string, shard: string): Promise<Map<string, { index: number; salt: string }>> {
    const key = `${build}/${shard}`;
    let entries = this.shards.get(key);
    if (!entries) {
      entries = readFile(join(buildDir, shard, SHARD_LOG_FILE), 'utf8').then(
        (text) => new Map(text.split('\n').filter(Boolean).map((line) => {
          const e = JSON.parse(line) as { domain: string; index: number; salt: string };
          return [e.domain, { index: e.index, salt: e.salt }] as const;
        })),
        (error: NodeJS.ErrnoException) => {
          // No file: the build was made without a log key. Anything else is not an answer to keep.
          if (error.code === 'ENOENT') return new Map();
          this.shards.delete(key);
          throw new StoreUnavailableError(`cannot read ${join(buildDir, shard, SHARD_LOG_FILE)}: ${error.message}`);
        },
      );
      this.shards.set(key, entries);
      // Oldest first out: a Map iterates in insertion order.
      if (this.shards.size > SHARDS_KEPT) this.shards.delete(this.shards.keys().next().value!);
    }
    return entries;
  }
}
