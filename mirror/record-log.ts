import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeBase64, verifyInclusion } from '#shared';
import { hasher } from '../core/crypto/hash.ts';
import { type MirrorPlace, MirrorRefusedError } from '../core/errors/errors.ts';
import { SHARD_LOG_FILE } from '../core/layout.ts';
import { type TileFetch, TileTree } from '../core/tlog/tile-tree.ts';
import { TILE_WIDTH } from '../core/tlog/tiles.ts';
import { parseShardLog, recordLeaf } from '../service/log-proofs.ts';
import type { BoundedReader } from './checks.ts';

// A record's own log proof (`GET /v1/proof`, `mvr verify --log`) is made from its shard's
// `log.jsonl` (its entry's index and salt) and the log's tiles. A mirror keeps both, checked: each
// record's entry, rebuilt from its bytes and salt, must be the leaf at its index under the
// checkpoint the statement was proven against, so the mirror's gateway serves no proof that would
// not verify.

/** Where a build's records are in the log: entries [from, to) (the manifest's range). */
export interface LogRange {
  from: number;
  to: number;
}

/**
 * Checks each record of a build, in map order, against its entry in the log, and writes the shard
 * files it checked into the build's staging folder (rebuilt from the checked entries, so nothing
 * unchecked is kept). Records come in ascending domain hash, so shard by shard: one shard's entries
 * are in memory at a time. A level-0 tile is proven once, by one inclusion proof of an entry in it
 * against the checkpoint's root (which folds every hash of the tile); each record's leaf is then
 * compared with its hash in the tile. The tiles read are those the records' proofs read: the caller's
 * fetch keeps them for the mirror's log.
 */
export class RecordLogCheck {
  private readonly tree: TileTree;
  private readonly provenTiles = new Set<number>();
  private shard: { name: string; entries: Map<string, { index: number; salt: string }>; lines: string[] } | null = null;

  constructor(
    private readonly build: string,
    private readonly read: BoundedReader,
    private readonly range: LogRange,
    private readonly checkpoint: { size: number; root: Uint8Array },
    tiles: TileFetch,
    private readonly stagingDir: string,
  ) {
    this.tree = new TileTree(hasher, checkpoint.size, tiles);
  }

  /**
   * Checks `record` (the bytes of `domain`'s record, in `shard`, at `place`, as `named()` names it)
   * against its entry in the log; MIRROR_REFUSED when it is not there.
   */
  async check(domain: string, shardName: string, record: Uint8Array, place: MirrorPlace, named: () => string): Promise<void> {
    const refuse = (why: string) => new MirrorRefusedError(`build ${this.build} refused: ${named()} ${why}`, place);
    // Most records are in the shard and the tile of the one before: those wait on no read.
    const shard = this.shard?.name === shardName ? this.shard : await this.readShard(shardName, refuse);
    const entry = shard.entries.get(domain);
    if (!entry) throw refuse(`has no entry in its shard's ${SHARD_LOG_FILE}: its log proof could not be served`);
    const salt = decodeBase64(entry.salt);
    const { index } = entry;
    if (!salt || !Number.isSafeInteger(index) || index < this.range.from || index >= this.range.to)
      throw refuse(
        `has an entry (index ${index}) outside the build's entries [${this.range.from}, ${this.range.to}) of the log, or no salt`,
      );
    let logged: Uint8Array;
    try {
      if (!this.provenTiles.has(Math.floor(index / TILE_WIDTH))) await this.proveTile(index);
      [logged] = (await this.tree.leafHashes(index, index + 1)) as [Uint8Array];
    } catch (error) {
      if (error instanceof MirrorRefusedError) throw refuse(error.message);
      throw refuse(`cannot be proven in the log: ${(error as Error).message}`);
    }
    if (!Buffer.from(logged).equals(recordLeaf(salt, record)))
      throw refuse(`is not entry ${index} of the log: its bytes, salted, hash to another leaf`);
    shard.lines.push(`${JSON.stringify({ domain, index, salt: entry.salt })}\n`);
  }

  /** Writes the last shard's file; call once every record was checked. */
  async finish(): Promise<void> {
    await this.flush();
  }

  /** Proves the level-0 tile of entry `index` (one not proven yet) against the checkpoint, by an inclusion proof of `index`. */
  private async proveTile(index: number): Promise<void> {
    const tile = Math.floor(index / TILE_WIDTH);
    const [leaf] = (await this.tree.leafHashes(index, index + 1)) as [Uint8Array];
    const proof = await this.tree.inclusion(index);
    if (!verifyInclusion(hasher, this.checkpoint, { index, hash: leaf }, proof))
      throw new MirrorRefusedError(`has a log tile that does not verify against the checkpoint (entry ${index})`);
    this.provenTiles.add(tile);
  }

  /** The entries of shard `name`, read (bounded by the limits table) when the records reach it; the shard before written out. */
  private async readShard(name: string, refuse: (why: string) => MirrorRefusedError) {
    await this.flush();
    const path = `${name}/${SHARD_LOG_FILE}`;
    const bytes = await this.read(path);
    if (!bytes) throw refuse(`has no ${path} in its build: its log proof could not be served`);
    let entries: Map<string, { index: number; salt: string }>;
    try {
      entries = parseShardLog(bytes);
    } catch (error) {
      throw refuse(`has a ${path} that is not one JSON line an entry: ${(error as Error).message}`);
    }
    this.shard = { name, entries, lines: [] };
    return this.shard;
  }

  private async flush(): Promise<void> {
    if (!this.shard) return;
    const dir = join(this.stagingDir, this.shard.name);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, SHARD_LOG_FILE), this.shard.lines.join(''));
    this.shard = null;
  }
}
