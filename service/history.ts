import { createHash } from 'node:crypto';
import type { AbsenceProof } from '@merchant-verify/verifier/internal/issuer';
import { BuildNotFoundError, InvalidRequestError, RecordUnavailableError, StoreUnavailableError } from '../core/errors.ts';
import { strongEtag } from '../core/etag.ts';
import type { ChangeEntry, ChangesPage, HistoryAnswer, HistoryEntry } from '../core/history-schema.ts';
import { CHANGES_DIR, MANIFEST_FILE, recordPath } from '../core/layout.ts';
import type { VerificationRecord } from '../core/record.ts';
import type { KeptBuild } from '../storage/kept-builds.ts';
import type { Store } from '../storage/store.ts';
import { absenceProof, type BuildMap, hasRecord, KeptMaps, loadBuildMap } from './build-maps.ts';
import { checkServeRule, type RecordsService, type ServedRecord } from './records.ts';

/** Memory for the domain maps of kept builds other than the live one (32 bytes a domain). */
const KEPT_MAPS_BYTES = 256 * 1024 * 1024;

/** Changes per page of `GET /v1/changes`. */
export const CHANGES_PAGE = 1000;

/** Bytes of a change feed read at a time: a page of 1000 changes is about 150 KB. */
const CHANGES_CHUNK = 256 * 1024;

/**
 * The kept builds (`mvr build --keep`, uploaded with each build by `mvr publish`): the list, a
 * domain's record in any of them, its history, and the change feed the build wrote. The same
 * code answers for every store; only the reading of bytes differs ({@link Store}), and a store
 * that keeps no builds says so (BUILD_NOT_FOUND, `NoBuildHistoryError`). Records of a past build pass the same serve rule as the live one, against
 * the key set the gateway serves (which keeps every key a kept build was signed with). A store
 * that cannot be read is STORE_UNAVAILABLE, never an empty list or a never-audited record.
 */
export class BuildHistory {
  /** The kept builds as last read, and what they were read for (the live build and the list's version). */
  private listed: { key: string; builds: Promise<KeptBuild[]> } | null = null;
  /** The checked domain maps of kept builds other than the live one. */
  private readonly maps = new KeptMaps(KEPT_MAPS_BYTES);

  /** The store the records service reads. */
  private readonly store: Store;

  constructor(private readonly records: RecordsService) {
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
    if (!hasRecord(await this.mapOf(kept.id, builds), domain)) return this.records.neverAudited(domain, now);
    const bytes = await this.stored(kept.id, domain);
    checkServeRule(domain, bytes, this.records.checkKeys());
    return { bytes, etag: strongEtag(bytes), audited: true };
  }

  /** Whether a kept build's map lists `domain` (BUILD_NOT_FOUND for a build not kept). */
  async hasRecordIn(build: string, domain: string): Promise<boolean> {
    const builds = await this.builds();
    return hasRecord(await this.mapOf(this.kept(builds, build).id, builds), domain);
  }

  /** The proof that `domain` has no record in a kept build (HAS_RECORD when it has one). */
  async absenceIn(build: string, domain: string): Promise<AbsenceProof> {
    const builds = await this.builds();
    return absenceProof(await this.mapOf(this.kept(builds, build).id, builds), domain);
  }

  /** A kept build's checked map: the live one from the records service, others loaded once and kept while they fit. */
  private mapOf(build: string, builds: KeptBuild[]): Promise<BuildMap> {
    if (build === builds[0]?.id) return this.records.buildMap();
    const keys = this.records.checkKeys();
    return this.maps.get(`${build}|${this.records.keys.generation()}`, () =>
      loadBuildMap((name) => this.readBuildFile(build, name), keys, build, build),
    );
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
          (bytes) => ({ bytes, error: null }),
          // A build pruned since the list was read has nothing to say any more.
          (error: unknown) => (error instanceof BuildNotFoundError ? { bytes: null, error: null } : { bytes: null, error }),
        ),
      ),
    );
    const entries: HistoryEntry[] = [];
    for (const [i, { bytes, error }] of found.entries()) {
      if (error) throw error;
      if (!bytes) continue;
      checkServeRule(domain, bytes, this.records.checkKeys());
      const r = JSON.parse(bytes.toString('utf8')) as VerificationRecord;
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
   * What changed from kept build `since` to the live build, as the build computed it, a page of
   * at most {@link CHANGES_PAGE} at a time. The cursor is a byte offset into the live build's
   * feed file, tied to the live build: a cursor from before a new build is refused, and so is
   * one that does not fall on the start of a line (the byte before it, read with the page, is
   * not a newline).
   */
  async changes(since: string, cursor: string | undefined): Promise<ChangesPage> {
    const builds = await this.builds();
    const live = builds[0];
    this.kept(builds, since);
    if (!live || since === live.id) return { from: since, to: live?.id ?? since, changes: [], next: null };
    const file = `${CHANGES_DIR}/${since}.jsonl`;
    const start = cursor === undefined ? 0 : offsetOf(cursor, live.id);
    const changes: ChangeEntry[] = [];
    let consumed = start;
    let at = start > 0 ? start - 1 : 0;
    let rest: Buffer = Buffer.alloc(0);
    for (let first = true; ; first = false) {
      const chunk = await this.store.readRange(live.id, file, at, CHANGES_CHUNK);
      if (!chunk) throw new BuildNotFoundError(since);
      at += chunk.length;
      const end = chunk.length < CHANGES_CHUNK;
      rest = rest.length ? Buffer.concat([rest, chunk]) : chunk;
      if (first && start > 0) {
        if (rest[0] !== 0x0a) throw new InvalidRequestError(`query parameter "cursor": "${cursor}" is not a cursor this API gave`);
        rest = rest.subarray(1);
      }
      for (let nl; changes.length < CHANGES_PAGE && (nl = rest.indexOf(0x0a)) >= 0; rest = rest.subarray(nl + 1)) {
        changes.push(JSON.parse(rest.subarray(0, nl).toString('utf8')) as ChangeEntry);
        consumed += nl + 1;
      }
      // The last line may lack its newline.
      if (end && rest.length > 0 && changes.length < CHANGES_PAGE) {
        changes.push(JSON.parse(rest.toString('utf8')) as ChangeEntry);
        consumed += rest.length + 1;
        rest = Buffer.alloc(0);
      }
      // A full page has a next one only when something follows it: read on until that is known.
      const full = changes.length === CHANGES_PAGE;
      if (end || (full && rest.length > 0))
        return { from: since, to: live.id, changes, next: full && rest.length > 0 ? cursorOf(consumed, live.id) : null };
    }
  }

  private kept(builds: KeptBuild[], build: string): KeptBuild {
    const found = builds.find((b) => b.id === build);
    if (!found) throw new BuildNotFoundError(build);
    return found;
  }

  /** A build's record of `domain` when its map lists it, else null. */
  private async storedIfMapped(build: string, domain: string, builds: KeptBuild[]): Promise<Buffer | null> {
    return hasRecord(await this.mapOf(build, builds), domain) ? this.stored(build, domain) : null;
  }

  /**
   * The record of a domain its build's map lists: a regular file or object of at most 64 KiB.
   * Missing, it is UNAVAILABLE (the map says it is there), unless the build was pruned meanwhile
   * (BUILD_NOT_FOUND).
   */
  private async stored(build: string, domain: string): Promise<Buffer> {
    const bytes = await this.store.readRecordFile(build, recordPath(domain));
    if (bytes) return bytes;
    if (!(await this.store.readFile(build, MANIFEST_FILE))) throw new BuildNotFoundError(build);
    throw new RecordUnavailableError(`the record of ${domain} is missing from build ${build}, though the build's domain map lists it`);
  }
}

const tagOf = (build: string) => createHash('sha256').update(build).digest('base64url').slice(0, 8);
const cursorOf = (offset: number, build: string) => `${offset}.${tagOf(build)}`;

function offsetOf(cursor: string, build: string): number {
  const m = /^(\d{1,15})\.([A-Za-z0-9_-]{8})$/.exec(cursor);
  if (!m) throw new InvalidRequestError(`query parameter "cursor": "${cursor}" is not a cursor this API gave`);
  if (m[2] !== tagOf(build))
    throw new InvalidRequestError('query parameter "cursor": it belongs to an earlier live build; start again without it');
  return Number(m[1]);
}
