import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { PacksHead } from '#shared';
import type { SigningKey } from '../core/crypto/signing.ts';
import { BuildDigest } from './build-id.ts';
import { type ShardRun, writeIndex } from './changes.ts';
import { writeCompactAnswers } from './compact-answers.ts';
import { MapLeaves, writeDomainMap } from './domain-map.ts';
import type { BuildSummary } from './options.ts';
import { type PackPlaces, PackWriter } from './packs.ts';
import { SPILL_DIR, spilledRecords } from './shard-records.ts';

// The index and map phases of a build: what ./index-worker.ts runs in a thread of its own
// (./index-thread.ts starts it), so that the heap they grow is capped and returned when it ends.

/** What the index and map are given once. */
export interface IndexInit {
  stagingDir: string;
  /** The records the signing phase wrote. */
  records: number;
  packRecords?: number | undefined;
  issuer: string;
  schemaUrl: string;
  /** The SHA-256 of the Oblivious HTTP key config the statement names, or null when the build has none. */
  ohttpKeyConfigSha256: string | null;
  /** The build's signing key (the statement is signed with it), or null for an unsigned build. */
  key: SigningKey | null;
  issuedAt: string;
}

/** The thread's two tasks, in this order. */
export type IndexTask = { step: 'index' } | { step: 'map' };

/** The index written: the domains audited twice (then nothing else is done), or the build's id and its packs. */
export type Indexed =
  | { duplicates: string[] }
  | { duplicates: []; buildId: string; runs: ShardRun[]; packs: PacksHead; packsSummary: BuildSummary['packs'] };

/** The map and statement written, and where the records are in the packs (for the log). */
export interface Mapped {
  domainMap: BuildSummary['domainMap'];
  places: PackPlaces;
}

/** A build's index, packs, domain map and statement, written from the spilled records: {@link index}, then {@link map}. */
export class IndexAndMap {
  private readonly leaves: MapLeaves;
  private readonly packer: PackWriter;
  private packs: PacksHead | null = null;
  private buildId = '';

  constructor(private readonly init: IndexInit) {
    this.leaves = new MapLeaves(init.records);
    this.packer = new PackWriter(init.stagingDir, init.records, init.packRecords);
  }

  /**
   * The index (shards in, map leaves, packs and the build's digest out) and the build's id: readable
   * by date, the rest from the content, so the same build made twice is one build. When it fails, the
   * pack being written is closed: a failed build holds no file open.
   */
  async index(): Promise<Indexed> {
    try {
      return await this.writeIndex();
    } catch (error) {
      this.packer.abandon();
      throw error;
    }
  }

  private async writeIndex(): Promise<Indexed> {
    const { stagingDir, issuer, schemaUrl, key, issuedAt } = this.init;
    const { leaves, packer } = this;
    const digest = new BuildDigest({ issuer, schemaUrl, keyId: key?.kid ?? null });
    const { runs, duplicates } = await writeIndex(
      stagingDir,
      spilledRecords(stagingDir),
      () => {
        leaves.shard();
        packer.shard();
      },
      (text, domain, record, bytes) => {
        digest.add(text);
        leaves.record(bytes, domain, record);
        packer.record(bytes, domain);
      },
    );
    if (duplicates.size > 0) return { duplicates: [...duplicates] };
    // The spilled records are in the packs now; they are no part of the build.
    await rm(join(stagingDir, SPILL_DIR), { recursive: true, force: true });
    const packs = (this.packs = packer.finish());
    this.buildId = digest.id(issuedAt);
    const packsSummary: BuildSummary['packs'] = {
      durationMs: packer.spentMs,
      files: packs.files.length,
      bytes: packs.files.reduce((sum, f) => sum + f.bytes, 0),
      recordsPerPack: packs.records_per_pack,
    };
    return { duplicates: [], buildId: this.buildId, runs, packs, packsSummary };
  }

  /** One task of the index and map phases, as their thread is handed it (./index-worker.ts) or the build's thread runs it (./index-thread.ts). */
  run(task: IndexTask): Promise<Indexed | Mapped> {
    return task.step === 'index' ? this.index() : this.map();
  }

  /** The domain map and the signed statement over it (what "never audited" is decided by), and the compact answers. */
  async map(): Promise<Mapped> {
    const { stagingDir, issuer, key, issuedAt, ohttpKeyConfigSha256 } = this.init;
    const started = performance.now();
    const lookup = this.leaves.lookup();
    const { map } = await writeDomainMap(stagingDir, this.leaves.leaves(), {
      issuer,
      build: this.buildId,
      issuedAt,
      key,
      lookup,
      packs: this.packs!,
      ...(ohttpKeyConfigSha256 ? { ohttpKeyConfigSha256 } : {}),
    });
    const answers = await writeCompactAnswers(stagingDir, map, lookup.bits!, lookup.bucket_bytes!);
    const durationMs = this.leaves.spentMs + performance.now() - started;
    return { domainMap: { durationMs, domains: map.size, bytes: map.size * 32, answers }, places: this.packer.placed() };
  }
}
