import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { BuildNotFoundError, InvalidRequestError } from '../core/errors.ts';
import { BUILDS_DIR, CHANGES_DIR, KEPT_FILE, MANIFEST_FILE, recordPath } from '../core/layout.ts';
import { strongEtag } from './etag.ts';
import { fileSignature } from './files.ts';
import { readKept, type KeptBuild } from './kept-builds.ts';
import { checkServeRule, type RecordsService, type ServedRecord } from './records.ts';

/** Changes per page of `GET /v1/changes`. */
export const CHANGES_PAGE = 1000;

export interface HistoryEntry {
  build: string;
  issued_at: string;
  status: string;
  tier: string | null;
  score: number | null;
  last_audited_at: string | null;
}

export interface ChangesPage {
  from: string;
  to: string;
  changes: unknown[];
  next: string | null;
}

/**
 * The kept builds of a records folder (`mvr build --keep`): the list, a domain's record in any of
 * them, its history, and the change feed the build wrote. Records of a past build pass the same
 * serve rule as the live one, against the key set the gateway publishes (which keeps every key a
 * kept build was signed with). Records from an origin or a bucket keep no history here.
 */
export class BuildHistory {
  /** The kept builds as last read, and what they were read for (the live build and kept.json as they were). */
  private listed: { key: string; builds: Promise<KeptBuild[]> } | null = null;

  constructor(
    private readonly records: RecordsService,
    private readonly recordsDir: string,
  ) {}

  /** The history of a records service's folder; null when its records come from an origin or a bucket. */
  static of(records: RecordsService): BuildHistory | null {
    return records.folder === null ? null : new BuildHistory(records, records.folder);
  }

  /**
   * The kept builds, newest first, the live one first. Read again only when the live build or
   * kept.json changed (a build swaps, then writes kept.json, then prunes), not on every request.
   */
  async builds(): Promise<KeptBuild[]> {
    const key = `${this.records.source.generation()}|${await fileSignature(join(this.recordsDir, KEPT_FILE))}`;
    if (this.listed?.key !== key) this.listed = { key, builds: readKept(this.recordsDir) };
    return this.listed.builds;
  }

  /** The record of `domain` in a kept build: stored and checked, or the never-audited record. */
  async recordIn(build: string, domain: string, now = Date.now()): Promise<ServedRecord> {
    const builds = await this.builds();
    const kept = this.kept(builds, build);
    if (kept === builds[0]) return this.records.recordFor(domain, now);
    const bytes = await this.stored(kept.id, domain);
    if (!bytes) return this.records.neverAudited(domain, now);
    checkServeRule(domain, bytes, this.records.keySet());
    return { bytes, etag: strongEtag(bytes), audited: true };
  }

  /** One entry per kept build that has a record of `domain`, newest first. */
  async history(domain: string): Promise<{ domain: string; entries: HistoryEntry[] }> {
    const entries: HistoryEntry[] = [];
    for (const b of await this.builds()) {
      // A build pruned since the list was read has nothing to say any more.
      const bytes = await this.stored(b.id, domain).catch((error: unknown) => {
        if (error instanceof BuildNotFoundError) return null;
        throw error;
      });
      if (!bytes) continue;
      checkServeRule(domain, bytes, this.records.keySet());
      const r = JSON.parse(bytes.toString('utf8')) as { status: string; tier: string | null; score: number | null; last_audited_at: string | null };
      entries.push({ build: b.id, issued_at: b.issued_at, status: r.status, tier: r.tier, score: r.score, last_audited_at: r.last_audited_at });
    }
    return { domain, entries };
  }

  /**
   * What changed from kept build `since` to the live build, as the build computed it, a page of
   * at most {@link CHANGES_PAGE} at a time. The cursor is a byte offset into the live build's
   * feed file, tied to the live build: a cursor from before a new build is refused.
   */
  async changes(since: string, cursor: string | undefined): Promise<ChangesPage> {
    const builds = await this.builds();
    const live = builds[0];
    this.kept(builds, since);
    if (!live || since === live.id) return { from: since, to: live?.id ?? since, changes: [], next: null };
    const file = join(this.recordsDir, BUILDS_DIR, live.id, CHANGES_DIR, `${since}.jsonl`);
    if (!(await stat(file).catch(() => null))) throw new BuildNotFoundError(since);
    const start = cursor === undefined ? 0 : offsetOf(cursor, live.id);
    if (start > 0 && (await lineStartsAt(file, start)) === false) throw new InvalidRequestError(`query parameter "cursor": "${cursor}" is not a cursor this API gave`);
    const changes: unknown[] = [];
    let consumed = start;
    let more = false;
    const input = createReadStream(file, { start });
    for await (const line of createInterface({ input, crlfDelay: Infinity })) {
      if (changes.length === CHANGES_PAGE) {
        more = true;
        break;
      }
      changes.push(JSON.parse(line));
      consumed += Buffer.byteLength(line) + 1;
    }
    input.destroy();
    return { from: since, to: live.id, changes, next: more ? cursorOf(consumed, live.id) : null };
  }

  private kept(builds: KeptBuild[], build: string): KeptBuild {
    const found = builds.find((b) => b.id === build);
    if (!found) throw new BuildNotFoundError(build);
    return found;
  }

  /** A build's record of `domain`, or null when it has none; a build pruned meanwhile is BUILD_NOT_FOUND, never "none". */
  private async stored(build: string, domain: string): Promise<Buffer | null> {
    const dir = join(this.recordsDir, BUILDS_DIR, build);
    try {
      return await readFile(join(dir, recordPath(domain)));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      if ((await fileSignature(join(dir, MANIFEST_FILE))) === 'missing') throw new BuildNotFoundError(build);
      return null;
    }
  }
}

/** Whether a byte offset is the start of a line of the file (the byte before it is a newline). */
async function lineStartsAt(file: string, offset: number): Promise<boolean> {
  const handle = await open(file);
  try {
    const { bytesRead, buffer } = await handle.read(Buffer.alloc(1), 0, 1, offset - 1);
    return bytesRead === 1 && buffer[0] === 0x0a;
  } finally {
    await handle.close();
  }
}

const tagOf = (build: string) => createHash('sha256').update(build).digest('base64url').slice(0, 8);
const cursorOf = (offset: number, build: string) => `${offset}.${tagOf(build)}`;

function offsetOf(cursor: string, build: string): number {
  const m = /^(\d{1,15})\.([A-Za-z0-9_-]{8})$/.exec(cursor);
  if (!m) throw new InvalidRequestError(`query parameter "cursor": "${cursor}" is not a cursor this API gave`);
  if (m[2] !== tagOf(build)) throw new InvalidRequestError('query parameter "cursor": it belongs to an earlier live build; start again without it');
  return Number(m[1]);
}
