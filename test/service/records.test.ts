/**
 * The records service on its own, without HTTP: the one place a domain's answer is decided.
 * Real files from a real build, real signatures; the gateway and MCP tests show the shells
 * answer with exactly these bytes.
 */
import { readFile, rename, truncate, writeFile } from 'node:fs/promises';
import { verifyRecord } from '@merchant-verify/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson, formatTimestamp } from '#shared';
import { unverifiedRecord } from '../../core/rules/record.ts';
import type { RecordsService } from '../../service/records.ts';
import { openRecordsStack, type RecordsStackOptions } from '../../service/records-stack.ts';
import { cleanup } from '../support/gateway.ts';
import { liveRecords, publishedKeySet } from '../support/outputs.ts';
import { editLiveRecord, livePackFile, replaceLiveRecord } from '../support/packs.ts';
import { ISSUER, makeProject, type Project, SCHEMA_URL } from '../support/project.ts';

const AUDITED = 'acme-outdoor.example';
const NEVER = 'never-seen-shop.example';

afterAll(cleanup);

async function open(p: Project, overrides: Partial<RecordsStackOptions> = {}): Promise<RecordsService> {
  return (
    await openRecordsStack({
      store: { url: p.recordsDir, publicDir: p.publicDir },
      issuer: ISSUER,
      schemaUrl: SCHEMA_URL,
      cacheBytes: 1 << 20,
      ...overrides,
    })
  ).records;
}

describe('RecordsService.recordFor', () => {
  let project: Project;
  let records: RecordsService;
  beforeAll(async () => {
    project = await makeProject();
    records = await open(project);
    await records.refresh();
  });

  it('serves every stored record as its exact bytes, verified and marked audited', async () => {
    const files = await liveRecords(project);
    expect(files.size).toBeGreaterThan(10);
    for (const [domain, bytes] of files) {
      const served = await records.recordFor(domain);
      expect(served.audited).toBe(true);
      expect(served.bytes.equals(bytes)).toBe(true);
    }
  });

  it('answers a never-audited domain with the canonical never-audited record, issued at the start of the second', async () => {
    const now = Date.parse('2026-11-23T10:00:00.750Z');
    const served = await records.recordFor(NEVER, now);
    expect(served.audited).toBe(false);
    const expected = canonicalJson(
      unverifiedRecord(NEVER, { issuer: ISSUER, schemaUrl: SCHEMA_URL, issuedAt: formatTimestamp(Date.parse('2026-11-23T10:00:00.000Z')) }),
    );
    expect(served.bytes.toString('utf8')).toBe(expected);
    // The same second, the same bytes and entity tag; the next second, another.
    expect((await records.recordFor(NEVER, now + 200)).etag).toBe(served.etag);
    expect((await records.recordFor(NEVER, now + 300)).etag).not.toBe(served.etag);
    // Unsigned: a verifier says UNSIGNED, never valid.
    expect(verifyRecord(JSON.parse(expected), (await publishedKeySet(project)).keySet)).toMatchObject({ valid: false, code: 'UNSIGNED' });
  });
});

describe('the serve rule', () => {
  it('refuses a tampered record with UNAVAILABLE, and never answers it as never audited', async () => {
    const project = await makeProject();
    await editLiveRecord(project, AUDITED, (record) => JSON.stringify({ ...record, score: 100 }));
    const rejected: string[] = [];
    const records = await open(project, { onRejected: (domain, reason) => rejected.push(`${domain}: ${reason}`) });
    await records.refresh();
    await expect(records.recordFor(AUDITED)).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(rejected.join('\n')).toMatch(/BAD_SIGNATURE/);
  });

  it('answers STORE_UNAVAILABLE once the records folder is gone, for domains answered from memory before it went', async () => {
    const project = await makeProject();
    const records = await open(project);
    await records.refresh();
    for (const domain of [AUDITED, NEVER, NEVER]) await records.recordFor(domain);
    await rename(project.recordsDir, `${project.recordsDir}.away`);
    await records.refresh();
    for (const domain of [AUDITED, NEVER]) await expect(records.recordFor(domain)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
  });

  it('answers STORE_UNAVAILABLE when the records folder is gone, for audited and never-audited domains alike', async () => {
    const project = await makeProject();
    await rename(project.recordsDir, `${project.recordsDir}.away`);
    const records = await open(project);
    await records.refresh();
    for (const domain of [AUDITED, NEVER]) await expect(records.recordFor(domain)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(records.health()).toMatchObject({ ok: false, records: { ok: false } });
  });
});

/**
 * The first instant of a fault, staged without a clock: the service's refresh is what its timer
 * calls, here called by hand. (The soak saw both cases within 150 ms of a fault's start.)
 */
describe("a fault's first instant", () => {
  it("a vanished records folder: never audited still comes from the live build's signed map until the service looks again; a listed record's read looks at once", async () => {
    const project = await makeProject();
    const records = await open(project);
    await records.refresh();
    const away = `${project.recordsDir}.away`;
    await rename(project.recordsDir, away);
    // No read decides "never audited": the live build's signed map, in memory, still lists no such domain.
    expect((await records.recordFor(NEVER)).audited).toBe(false);
    // A listed record not in memory is read: the read fails, the service looks again and knows the folder is away...
    await expect(records.recordFor(AUDITED)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    // ...and from then on "we could not look" is never answered as "never audited".
    await expect(records.recordFor(NEVER)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    await rename(away, project.recordsDir);
    await records.refresh();
    expect((await records.recordFor(AUDITED)).audited).toBe(true);

    // Without a read in between, the timer's look is what tells: before it never audited, after it STORE_UNAVAILABLE.
    await rename(project.recordsDir, away);
    expect((await records.recordFor(NEVER)).audited).toBe(false);
    await records.refresh();
    await expect(records.recordFor(NEVER)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
  });

  it('a pack being rewritten whole refuses every record of it (it could not be read whole); a record damaged in place refuses that record alone', async () => {
    const project = await makeProject();
    const records = await open(project);
    await records.refresh();
    const pack = await livePackFile(project, AUDITED);
    const others: string[] = [];
    for (const domain of (await liveRecords(project)).keys())
      if (domain !== AUDITED && (await livePackFile(project, domain)) === pack) others.push(domain);
    const [neighbour, later] = others;
    expect(later).toBeDefined();
    const whole = await readFile(pack);
    // The moment a whole-file write (writeFile) has truncated the pack and not yet written it: the
    // neighbour cannot be read whole, so it is refused, not served and not "never audited".
    await truncate(pack, 0);
    await expect(records.recordFor(neighbour!)).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    await writeFile(pack, whole);
    // Damaged in place (only its range written): the pack keeps its length and its other records their bytes.
    await replaceLiveRecord(project, AUDITED, '\u0000garbage{"x":');
    expect((await readFile(pack)).length).toBe(whole.length);
    await expect(records.recordFor(AUDITED)).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect((await records.recordFor(neighbour!)).audited).toBe(true);
    expect((await records.recordFor(later!)).audited).toBe(true);
  });
});
