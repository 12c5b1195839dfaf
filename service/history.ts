import type { AbsenceProof, PacksHead } from '#shared';
import { domainHash } from '#shared';
import { sha256 } from '../core/crypto/hash.ts';
import { BuildNotFoundError, StoreUnavailableError } from '../core/errors/errors.ts';
import { strongEtag } from '../core/etag.ts';
import { DOMAIN_MAP_FILE, MANIFEST_FILE } from '../core/layout.ts';
import type { VerificationRecord } from '../core/rules/record.ts';
import type { ChangesPage, HistoryAnswer, HistoryEntry } from '../core/schemas/history.ts';
import type { KeptBuild } from '../storage/kept-builds.ts';
import type { Store } from '../storage/store.ts';
import { absenceProof, type BuildMap, KeptMaps, loadBuildMap } from './build-maps.ts';
import { changesPage } from './change-feed.ts';
import { MapIndex } from './map-index.ts';
import { entryAt, type Position, readBuildRecord, type StoredRecord } from './pack-records.ts';
import { checkServeRule, type RecordsService, type ServedRecord } from './records.ts';

/** Memory for the whole domain maps of kept builds other than the live one (82 bytes a domain, 32 in a v1 map), kept for absence proofs. */
const KEPT_MAPS_BYTES = 256 * 1024 * 1024;

/** What is kept of a kept build between requests: its map index and the packs its statement signs. */
interface KeptIndex {
  map: MapIndex;
  packs: PacksHead;
}

/** Map indexes kept (about 64 bytes per 1024 domains each) before those of builds no longer kept are dropped. */
const KEPT_INDEXES = 64;

export interface BuildHistoryOptions {
  /** Told each time a kept build's whole domain map is read and checked (for metrics): once per build, not per request. */
  onMapLoad?: (build: string) => void;
}

/**
 * The kept builds (`mvr build --keep`, uploaded with each build by `mvr publish`): the list, a
 * domain's record in any of them, its history, and the change feed the build wrote. The same
 * code answers for every store; only the reading of bytes differs ({@link Store}), and a store
 * that keeps no builds says so (BUILD_NOT_FOUND, `NoBuildHistoryError`). Records of a past build
 * pass the same serve rule as the live one, against the key set the gateway serves (which keeps
 * every key a kept build was signed with). Whether a past build has a domain's record is decided
 * by its signed map, read whole once and then kept as a small index ({@link MapIndex}), so asking
 * every kept build costs the same at any number of domains. A store that cannot be read is
 * STORE_UNAVAILABLE, never an empty list or a never-audited record.
 */
export class BuildHistory {
  /** The kept builds as last read, and what they were read for (the live build and the list's version). */
  private listed: { key: string; builds: Promise<KeptBuild[]> } | null = null;
  /** The checked domain maps of kept builds other than the live one, for absence proofs. */
  private readonly maps = new KeptMaps(KEPT_MAPS_BYTES);
  /** What is kept of each kept build's checked map to answer "is this domain in it" with one ranged read. */
  private readonly indexes = new Map<string, Promise<KeptIndex>>();
  /** The last whole map being loaded for an index: one at a time, so memory holds one map, not every kept build's. */
  private loading: Promise<unknown> = Promise.resolve();

  /** The store the records service reads. */
  private readonly store: Store;

  constructor(
    private readonly records: RecordsService,
    private readonly options: BuildHistoryOptions = {},
  ) {
    this.store = records.store;
  }

  /**
   * The kept builds, newest first, the live one first. Read again only when the live build or
   * the list's version changed, not on every request; a failed read is not kept.
   */
  async builds(): Promise<KeptBuild[]> {
    // The list's version first: a store that keeps no builds says so whether or not it is up.
    const version = await this.store.keptVersion();
    const state = this.store.describe();
    if (!state.ok) throw new StoreUnavailableError(`records unavailable: ${state.error ?? 'no live build'}`);
    const key = `${this.store.generation()}|${version}`;
    if (this.listed?.key !== key) {
      const listed = { key, builds: this.store.keptBuilds() };
      this.listed = listed;
      listed.builds.catch(() => {
        if (this.listed === listed) this.listed = null;
      });
    }
    return this.listed.builds;
  }

  /** The record of `domain` in a kept build: stored and checked when the build's map lists it, else the never-audited record. */
  async recordIn(build: string, domain: string, now = this.records.now()): Promise<ServedRecord> {
    const builds = await this.builds();
    const kept = this.kept(builds, build);
    if (kept === builds[0]) return this.records.recordFor(domain, now);
    const at = await this.positionIn(kept.id, domain, builds);
    if (!at) return this.records.neverAudited(domain, now);
    const bytes = await this.stored(kept.id, at, domain);
    checkServeRule(domain, bytes, this.records.checkKeys(), at.entry);
    return { bytes, etag: strongEtag(bytes), audited: true };
  }

  /** Whether a kept build's map lists `domain` (BUILD_NOT_FOUND for a build not kept). */
  async hasRecordIn(build: string, domain: string): Promise<boolean> {
    const builds = await this.builds();
    return (await this.positionIn(this.kept(builds, build).id, domain, builds)) !== null;
  }

  /**
   * The stored record of `domain` in a kept build or the live one, with the entry its map commits
   * it to (null in a v1 build), unchecked (the caller applies the serve rule), or null when that
   * build's map does not list it (BUILD_NOT_FOUND for a build not kept).
   */
  async storedIn(build: string, domain: string): Promise<StoredRecord | null> {
    const builds = await this.builds();
    return this.storedIfMapped(this.kept(builds, build).id, domain, builds);
  }

  /** The proof that `domain` has no record in a kept build (HAS_RECORD when it has one). */
  async absenceIn(build: string, domain: string): Promise<AbsenceProof> {
    const builds = await this.builds();
    return absenceProof(await this.mapOf(this.kept(builds, build).id, builds), domain);
  }

  /** A kept build's whole checked map, for absence proofs: the live one from the records service, others loaded once and kept while they fit. */
  private mapOf(build: string, builds: KeptBuild[]): Promise<BuildMap> {
    if (build === builds[0]?.id) return this.records.buildMap();
    const keys = this.records.checkKeys();
    return this.maps.get(`${build}|${this.records.keys.generation()}`, async () => {
      const m = await loadBuildMap((name) => this.readBuildFile(build, name), keys, build, build);
      this.options.onMapLoad?.(build);
      return m;
    });
  }

  private async readBuildFile(build: string, name: string): Promise<Buffer | null> {
    const bytes = await this.store.readFile(build, name);
    if (bytes || (await this.store.readFile(build, MANIFEST_FILE))) return bytes;
    throw new BuildNotFoundError(build);
  }

  /** One entry per kept build that has a record of `domain`, newest first. */
  async history(domain: string): Promise<HistoryAnswer> {
    const builds = await this.builds();
    // All builds at once (a bucket answers each in a round trip), then taken in order.
    const found = await Promise.all(
      builds.map((b) =>
        this.storedIfMapped(b.id, domain, builds).then(
          (stored) => ({ stored, error: null }),
          // A build pruned since the list was read has nothing to say any more.
          (error: unknown) => (error instanceof BuildNotFoundError ? { stored: null, error: null } : { stored: null, error }),
        ),
      ),
    );
    const entries: HistoryEntry[] = [];
    for (const [i, { stored, error }] of found.entries()) {
      if (error) throw error;
      if (!stored) continue;
      checkServeRule(domain, stored.bytes, this.records.checkKeys(), stored.entry);
      const r = JSON.parse(stored.bytes.toString('utf8')) as VerificationRecord;
      const b = builds[i]!;
      entries.push({
        build: b.id,
        issued_at: b.issued_at,
        status: r.status,
        tier: r.tier,
        score: r.score,
        last_audited_at: r.last_audited_at,
      });
    }
    return { domain, entries };
  }

  /**
   * What changed from kept build `since` to the live build, as the build computed it, a page at
   * a time (see {@link changesPage}).
   */
  async changes(since: string, cursor: string | undefined): Promise<ChangesPage> {
    const builds = await this.builds();
    const live = builds[0];
    this.kept(builds, since);
    if (!live || since === live.id) return { from: since, to: live?.id ?? since, changes: [], next: null };
    return changesPage(this.store, live.id, since, cursor);
  }

  private kept(builds: KeptBuild[], build: string): KeptBuild {
    const found = builds.find((b) => b.id === build);
    if (!found) throw new BuildNotFoundError(build);
    return found;
  }

  /** A build's record of `domain` when its map lists it, else null. */
  private async storedIfMapped(build: string, domain: string, builds: KeptBuild[]): Promise<StoredRecord | null> {
    const at = await this.positionIn(build, domain, builds);
    return at ? { bytes: await this.stored(build, at, domain), entry: at.entry } : null;
  }

  /**
   * Where a build's signed map puts `domain`, or null when it does not list it: the live build's
   * from the map in memory, a kept build's from its index and one chunk of its map file, so asking
   * every kept build costs the same at any number of domains (a missing record alone never says
   * "not in that build").
   */
  private async positionIn(build: string, domain: string, builds: KeptBuild[]): Promise<Position | null> {
    const hash = domainHash(sha256, domain);
    // The live build's map is in memory once the records service has it; until its refresh does (a
    // build just went live), it still holds the build before, whose positions are not this build's.
    const m = build === builds[0]?.id ? await this.records.buildMap() : null;
    if (m?.build === build) {
      const { found, index } = m.map.search(hash);
      return found ? { index, packs: m.packs, packIndex: m.packIndex, entry: entryAt(m.map, index) } : null;
    }
    const kept = await this.indexOf(build, builds);
    const at = await kept.map.position(hash, async (start, length) => {
      const bytes = await this.store.readRange(build, DOMAIN_MAP_FILE, start, length);
      if (!bytes && !(await this.store.readFile(build, MANIFEST_FILE))) throw new BuildNotFoundError(build);
      return bytes;
    });
    return at && { index: at.index, packs: kept.packs, packIndex: null, entry: at.entry };
  }

  /** A kept build's map index, made once from its whole map checked against its statement (one map loaded at a time). */
  private indexOf(build: string, builds: KeptBuild[]): Promise<KeptIndex> {
    const key = `${build}|${this.records.keys.generation()}`;
    const known = this.indexes.get(key);
    if (known) return known;
    if (this.indexes.size >= KEPT_INDEXES) {
      for (const k of this.indexes.keys()) if (!builds.some((b) => k.startsWith(`${b.id}|`))) this.indexes.delete(k);
    }
    const keys = this.records.checkKeys();
    const pending = this.loading
      .catch(() => undefined)
      .then(() => loadBuildMap((name) => this.readBuildFile(build, name), keys, build, build))
      .then((m) => {
        this.options.onMapLoad?.(build);
        return { map: MapIndex.of(build, m.leaves, m.map.leafSize), packs: m.packs };
      });
    this.loading = pending;
    this.indexes.set(key, pending);
    pending.catch(() => this.indexes.get(key) === pending && this.indexes.delete(key));
    return pending;
  }

  /** The record of a domain its build's map lists, from the build's packs (see {@link readBuildRecord}). */
  private stored(build: string, at: Position, domain: string): Promise<Buffer> {
    return readBuildRecord(this.store, build, at, domain);
  }
}
