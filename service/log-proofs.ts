import {
  type AbsenceProof,
  decodeBase64,
  formatTlogProof,
  parseCheckpoint,
  parseNote,
  statementEntry,
  statementText,
  verifyInclusion,
} from '#shared';
import { hasher, sha256 } from '../core/crypto/hash.ts';
import { BuildNotFoundError, NotInLogError, RecordUnavailableError } from '../core/errors/errors.ts';
import { BUILD_CHECKPOINT_FILE, BUILD_SERVED_CHECKPOINT_FILE, MANIFEST_FILE, recordPath, SHARD_LOG_FILE } from '../core/layout.ts';
import { parseManifest } from '../core/schemas/manifest.ts';
import { TileTree } from '../core/tlog/tile-tree.ts';
import { storeTiles } from '../storage/log-tiles.ts';
import type { Store } from '../storage/store.ts';
import type { BuildHistory } from './history.ts';
import { checkServeRule, type RecordsService } from './records.ts';
import { servedCheckpointOf, statementInclusion } from './served-checkpoint.ts';

/** A record and its C2SP tlog-proof, from one build. */
export interface ProvenRecord {
  build: string;
  record: Buffer;
  proof: string;
}

/** A record's entry in the log, as the build appended it: the leaf hash of SHA-256(salt || record bytes). */
export function recordLeaf(salt: Uint8Array, record: Uint8Array): Uint8Array {
  return hasher.leaf(sha256(Buffer.concat([salt, record])));
}

/** A shard's `log.jsonl` (one `{"domain","index","salt"}` line a record, as the build writes it): its entries by domain. Throws on a line that is not JSON. */
export function parseShardLog(bytes: Buffer): Map<string, { index: number; salt: string }> {
  return new Map(
    bytes
      .toString('utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const e = JSON.parse(line) as { domain: string; index: number; salt: string };
        return [e.domain, { index: e.index, salt: e.salt }] as const;
      }),
  );
}

/** Shard entry lists kept in memory (each a few thousand lines at 1M records). */
const SHARDS_KEPT = 64;

/** Statement proofs kept in memory: one a build, the same for every domain absent from it. */
const STATEMENT_PROOFS_KEPT = 16;

/**
 * Inclusion proofs of live records in the transparency log (`GET /v1/proof`, MCP), and the log's
 * public files (`/log/...`), from the store the records service reads (a store that keeps no log
 * says so: NOT_IN_LOG, `NoLogError`). A
 * proof is against the checkpoint the record's build signed (or the newer one served for it, see
 * `checkpointOf`), computed from the tiles; the entry's
 * index and salt come from the build's `<shard>/log.jsonl`. The record must pass the serve rule,
 * and the proof is checked before it is given: a proof that would not verify is never served.
 */
export class LogProofs {
  private readonly shards = new Map<string, Promise<Map<string, { index: number; salt: string }>>>();
  private readonly statementProofs = new Map<string, Promise<{ index: number; proof: Uint8Array[] } | null>>();
  /** The live build's checkpoint as last read (see {@link liveCheckpoint}). */
  private live: { build: string; checkpoint: Promise<string | null> } | null = null;

  /** The store the records service reads. */
  private readonly store: Store;

  constructor(
    private readonly records: RecordsService,
    /** The kept builds, whose maps say whether a kept build lists a domain. */
    private readonly history: BuildHistory,
  ) {
    this.store = records.store;
  }

  /** The public file `checkpoint` or `tile/...`; null when there is none. */
  file(path: string): Promise<Buffer | null> {
    return this.store.logFile(path);
  }

  /** The log's verifier key; null when there is none. */
  vkey(): Promise<Buffer | null> {
    return this.store.logVkey();
  }

  /**
   * The proof of `domain`'s record in the live build, or in `kept`, a build the caller has
   * checked is kept (BuildHistory decides that): its record against the checkpoint that build
   * signed. The log only grows, so today's tiles still prove an older, smaller tree.
   */
  async proofFor(domain: string, kept?: string): Promise<ProvenRecord> {
    // The live build is the one the records service answers from (its map taken), not the store's newer
    // pointer: a record and its proof read a moment apart around a swap are of one build.
    let build = kept;
    if (build === undefined) {
      await this.store.logBuild(); // a store that keeps no log says so here
      build = (await this.records.buildMap()).build;
    }
    const path = recordPath(domain);
    // Only the build's map says "never audited"; a record it lists must be in its pack (UNAVAILABLE
    // otherwise), and a kept build pruned since the caller looked is BUILD_NOT_FOUND.
    const stored = await this.history.storedIn(build, domain);
    if (!stored) throw new NotInLogError(`${domain} has no record in build ${build} (never audited then), so nothing of it is in the log`);
    const record = stored.bytes;
    checkServeRule(domain, record, this.records.checkKeys(), stored.entry);
    const entry = (await this.shard(build, path.slice(0, path.indexOf('/')))).get(domain);
    const checkpoint = await this.checkpointOf(build);
    if (!entry || checkpoint === null) throw new NotInLogError(`build ${build} was made without a log key: its records are not in the log`);
    const salt = decodeBase64(entry.salt);
    const { size, root } = parseCheckpoint(parseNote(checkpoint).text);
    const proof = await this.inclusion(entry.index, size, domain);
    const leaf = recordLeaf(salt ?? new Uint8Array(0), record);
    if (!salt || !verifyInclusion(hasher, { size, root }, { index: entry.index, hash: leaf }, proof)) {
      throw new RecordUnavailableError(`the log proof of ${domain} does not verify against build ${build}'s checkpoint; it is not served`);
    }
    return { build, record, proof: formatTlogProof({ extra: salt, index: entry.index, proof, checkpoint }) };
  }

  /**
   * The absence proof of `domain` in the live build, or in `kept` (checked kept by the caller),
   * with `statement_proof`: the build statement's entry against the checkpoint served for that build,
   * the one its records' proofs are against. Without it when the store keeps no log (an origin, a
   * copy of one build) or the build has no statement entry (made before statements were logged,
   * or without a log key).
   */
  async absenceFor(domain: string, kept?: string): Promise<AbsenceProof> {
    const proof = kept === undefined ? await this.records.absenceFor(domain) : await this.history.absenceIn(kept, domain);
    if (kept === undefined && this.store.liveBuild() === null) return proof;
    const statementProof = await this.statementProof(proof, await this.checkpointOf(proof.statement.build));
    return statementProof === null ? proof : { ...proof, statement_proof: statementProof };
  }

  /**
   * The checkpoint a build's proofs are served against: its served checkpoint (the log's newer head,
   * which a refresh writes once the quorum cosigned it after a build short of its own) when that is
   * of the same log and larger, else its own; null when the build has none. Read on each request for
   * a record's or an absence proof, so a refresh's fresh cosignatures are served at once; the live
   * statement (`GET /v1/lookup`) reads it at the records' refresh instead ({@link liveCheckpoint}).
   */
  private async checkpointOf(build: string): Promise<string | null> {
    const [own, served] = await Promise.all([
      this.store.readFile(build, BUILD_CHECKPOINT_FILE),
      this.store.readFile(build, BUILD_SERVED_CHECKPOINT_FILE),
    ]);
    return servedCheckpointOf(own, served);
  }

  /**
   * The live build's statement proof (see {@link absenceFor}) against `checkpoint` as last read
   * ({@link liveCheckpoint}), or read now when not given; null when the store keeps no log or the
   * build has no statement entry.
   */
  async liveStatementProof(statement: AbsenceProof['statement'], checkpoint?: string | null): Promise<string | null> {
    if (this.store.liveBuild() === null) return null;
    return this.statementProof({ statement }, checkpoint === undefined ? await this.checkpointOf(statement.build) : checkpoint);
  }

  /**
   * The checkpoint the live build's proofs are served against, as last read: read when `build` is
   * first asked about, and again at each {@link refreshLive}, never per request (`GET /v1/lookup`
   * serves bytes made once per build and checkpoint). Null when the store keeps no log.
   */
  liveCheckpoint(build: string): Promise<string | null> {
    if (this.store.liveBuild() === null) return Promise.resolve(null);
    if (this.live?.build !== build) {
      const live = { build, checkpoint: this.checkpointOf(build) };
      this.live = live;
      // A failed first read is not kept: the next request reads again.
      live.checkpoint.catch(() => {
        if (this.live === live) this.live = null;
      });
    }
    return this.live.checkpoint;
  }

  /**
   * Reads the live build's checkpoint again (the records stack's refresh loop calls it), so a
   * refresh's fresh cosignatures reach {@link liveCheckpoint} within one tick. The same text keeps
   * the same string, so what was made from it stays; a failed read keeps what was read before.
   */
  async refreshLive(): Promise<void> {
    const live = this.live;
    if (!live) return;
    const [before, now] = await Promise.all([live.checkpoint, this.checkpointOf(live.build)]);
    if (this.live === live && now !== before) this.live = { build: live.build, checkpoint: Promise.resolve(now) };
  }

  /** A build's statement proof against `checkpoint` (its {@link checkpointOf}): the path made once per checkpoint size (the tiles never change); a failure is not kept. */
  private async statementProof({ statement }: Pick<AbsenceProof, 'statement'>, checkpoint: string | null): Promise<string | null> {
    const size = checkpoint === null ? null : parseCheckpoint(parseNote(checkpoint).text).size;
    const key = `${statement.build}@${size}`;
    let made = this.statementProofs.get(key);
    if (!made) {
      made = this.makeStatementProof(statement, checkpoint);
      this.statementProofs.set(key, made);
      made.catch(() => this.statementProofs.delete(key));
      if (this.statementProofs.size > STATEMENT_PROOFS_KEPT) this.statementProofs.delete(this.statementProofs.keys().next().value!);
    }
    const proof = await made;
    return proof === null || checkpoint === null ? null : formatTlogProof({ extra: null, ...proof, checkpoint });
  }

  /**
   * The statement's entry is the checkpoint's last when that entry is this statement's (a build that
   * did not go live appended the live statement again, so the served checkpoint ends with it, and a
   * verifier refuses a statement that is not last as BUILD_SUPERSEDED), else where the build's
   * manifest says. The proof is made from the tiles and checked against the statement as the answer
   * carries it (the bytes a verifier rebuilds), so a proof that would not verify is never served.
   */
  private async makeStatementProof(
    statement: AbsenceProof['statement'],
    checkpoint: string | null,
  ): Promise<{ index: number; proof: Uint8Array[] } | null> {
    const build = statement.build;
    const manifest = await this.store.readFile(build, MANIFEST_FILE);
    if (!manifest) throw new BuildNotFoundError(build);
    let index: number | undefined;
    try {
      index = parseManifest(manifest, `build ${build}'s ${MANIFEST_FILE}`).log?.statement;
    } catch (error) {
      throw new RecordUnavailableError((error as Error).message, { cause: error });
    }
    if (index === undefined) return null;
    if (!checkpoint) throw new RecordUnavailableError(`build ${build} has its statement in the log but no ${BUILD_CHECKPOINT_FILE}`);
    const { size, root } = parseCheckpoint(parseNote(checkpoint).text);
    const leaf = hasher.leaf(statementEntry(sha256, Buffer.from(statementText(statement))));
    let proven: { index: number; proof: Uint8Array[] };
    try {
      proven = await statementInclusion(new TileTree(hasher, size, storeTiles(this.store)), index, root, leaf);
    } catch (error) {
      throw new RecordUnavailableError(`the log tiles for build ${build}'s statement cannot be read: ${(error as Error).message}`, {
        cause: error,
      });
    }
    const { proof } = proven;
    index = proven.index;
    if (!verifyInclusion(hasher, { size, root }, { index, hash: leaf }, proof))
      throw new RecordUnavailableError(
        `the log proof of build ${build}'s statement does not verify against its checkpoint; it is not served`,
      );
    return { index, proof };
  }

  /** The inclusion proof of entry `index` in the tree of `size`, from the tiles; UNAVAILABLE when they cannot be read. */
  private async inclusion(index: number, size: number, what: string): Promise<Uint8Array[]> {
    try {
      return await new TileTree(hasher, size, storeTiles(this.store)).inclusion(index);
    } catch (error) {
      throw new RecordUnavailableError(`the log tiles for ${what} cannot be read: ${(error as Error).message}`, { cause: error });
    }
  }

  private shard(build: string, shard: string): Promise<Map<string, { index: number; salt: string }>> {
    const key = `${build}/${shard}`;
    let entries = this.shards.get(key);
    if (!entries) {
      // No file: the build was made without a log key (an empty list). A store that cannot be read throws, and is not kept.
      entries = this.store.readFile(build, `${shard}/${SHARD_LOG_FILE}`).then(
        (bytes) => parseShardLog(bytes ?? Buffer.alloc(0)),
        (error: unknown) => {
          this.shards.delete(key);
          throw error;
        },
      );
      this.shards.set(key, entries);
      // Oldest first out: a Map iterates in insertion order.
      if (this.shards.size > SHARDS_KEPT) this.shards.delete(this.shards.keys().next().value!);
    }
    return entries;
  }
}
