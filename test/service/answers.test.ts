/**
 * Where an answer is decided, without a server: the records service, the serve rule, compact
 * private lookups, bundles and the kept builds' history, opened over the real files of two real logged
 * builds (November, then December) in a real records folder, and checked with the verifier
 * package as a caller would. The gateway and MCP tests show the shells answer with these.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import {
  bucketHex,
  bucketOf,
  recordMatchesEntry,
  verdictOf,
  verifyBundle,
  verifyCompactAnswer,
  verifyRecord,
} from '@merchant-verify/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleFor } from '../../service/bundles.ts';
import { openRecordsStack, type RecordsStack } from '../../service/records-stack.ts';
import { checkServeRule, rejectionKind } from '../../service/serve-rule.ts';
import { DEC, loggedProject, NOV, vkeyFile } from '../support/logged-project.ts';
import { build, GOLD, ISSUER, type Project, removeTempDirs, SCHEMA_URL, UNAUDITED } from '../support/project.ts';

const OTHER = 'gadget-hub.example';

let p: Project;
let stack: RecordsStack;
let keySet: unknown;
let log: { vkey: string };
let nov: string;
let dec: string;

beforeAll(async () => {
  p = await loggedProject();
  nov = (await build(p, { now: NOV })).buildId;
  dec = (await build(p, { now: DEC })).buildId;
  stack = await openRecordsStack({
    store: { url: p.recordsDir, publicDir: p.publicDir },
    issuer: ISSUER,
    schemaUrl: SCHEMA_URL,
    cacheBytes: 1 << 20,
  });
  keySet = JSON.parse(await readFile(p.keySetFile, 'utf8'));
  log = { vkey: (await readFile(vkeyFile(p), 'utf8')).trim() };
});
afterAll(async () => {
  await stack?.close();
  await removeTempDirs();
});

const hashOf = (domain: string) => new Uint8Array(createHash('sha256').update(domain).digest());

describe('the records service', () => {
  it('answers from the live build: a record verifies, a never-audited domain is unsigned', async () => {
    const served = await stack.records.recordFor(GOLD);
    expect(served.audited).toBe(true);
    const record = JSON.parse(served.bytes.toString('utf8'));
    expect(record.issued_at).toBe(new Date(DEC).toISOString());
    expect(verifyRecord(record, keySet)).toMatchObject({ valid: true });
    const never = await stack.records.recordFor(UNAUDITED, DEC);
    expect(never.audited).toBe(false);
    expect(verifyRecord(JSON.parse(never.bytes.toString('utf8')), keySet)).toMatchObject({ valid: false, code: 'UNSIGNED' });
    expect((await stack.records.buildMap()).build).toBe(dec);
  });
});

describe('the serve rule', () => {
  const keys = () => stack.records.checkKeys();
  const refusal = (run: () => void) => {
    try {
      run();
    } catch (error) {
      return { code: (error as { code?: string }).code, kind: rejectionKind(error as never) };
    }
    return null;
  };

  it('passes a stored record against the keys and the entry its build committed', async () => {
    const live = (await stack.history.storedIn(dec, GOLD))!;
    expect(refusal(() => checkServeRule(GOLD, live.bytes, keys(), live.entry))).toBeNull();
  });

  it("refuses the record of the build before in this build's place: validly signed, not what the map committed", async () => {
    const before = (await stack.history.storedIn(nov, GOLD))!;
    const live = (await stack.history.storedIn(dec, GOLD))!;
    expect(before.bytes.equals(live.bytes)).toBe(false);
    expect(verifyRecord(JSON.parse(before.bytes.toString('utf8')), keySet)).toMatchObject({ valid: true });
    expect(refusal(() => checkServeRule(GOLD, before.bytes, keys(), live.entry))).toEqual({ code: 'UNAVAILABLE', kind: 'not_in_map' });
  });

  it('refuses, as UNAVAILABLE, bytes that are not JSON, another domain, a changed score', async () => {
    const live = (await stack.history.storedIn(dec, GOLD))!;
    const record = JSON.parse(live.bytes.toString('utf8'));
    const cases = [
      Buffer.from('not json'),
      (await stack.history.storedIn(dec, OTHER))!.bytes,
      Buffer.from(JSON.stringify({ ...record, score: record.score === 100 ? 99 : 100 })),
    ];
    for (const bytes of cases)
      expect(refusal(() => checkServeRule(GOLD, bytes, keys(), live.entry))).toEqual({ code: 'UNAVAILABLE', kind: 'serve_rule' });
  });
});

describe('compact private lookups', () => {
  const bucketFor = async (domain: string) => {
    const { statement } = await stack.records.buildMap();
    const bits = statement.lookup!.bits!;
    return { statement, bits, hex: bucketHex(bucketOf(hashOf(domain), bits), bits) };
  };
  const verifyFor = async (domain: string) => {
    const { statement, bits, hex } = await bucketFor(domain);
    const { bytes } = await stack.compact.answer(String(bits), hex);
    return verifyCompactAnswer({ domain, answer: new Uint8Array(bytes), statement, keySet });
  };

  it("gives an audited domain its record's entry and a never-audited one its proven absence, from its hash's bits alone", async () => {
    const gold = await verifyFor(GOLD);
    expect(gold).toMatchObject({ code: null, message: null });
    expect(recordMatchesEntry(gold.entry!, JSON.parse((await stack.records.recordFor(GOLD)).bytes.toString('utf8')))).toBeNull();
    expect((await verifyFor(UNAUDITED)).code).toBe('NEVER_AUDITED');
  });

  it("refuses other bits (PREFIX_LENGTH_MISMATCH) or a bucket not of those bits (INVALID_PREFIX); another bucket's answer is refused by the caller", async () => {
    const { statement, bits, hex } = await bucketFor(GOLD);
    await expect(stack.compact.answer(String(bits + 1), hex)).rejects.toMatchObject({ code: 'PREFIX_LENGTH_MISMATCH' });
    await expect(stack.compact.answer(String(bits), 'G'.repeat(hex.length))).rejects.toMatchObject({ code: 'INVALID_PREFIX' });
    const other = bucketHex(bucketOf(hashOf(GOLD), bits) ^ 1, bits);
    const { bytes } = await stack.compact.answer(String(bits), other);
    expect(verifyCompactAnswer({ domain: GOLD, answer: new Uint8Array(bytes), statement, keySet }).code).toBe('PREFIX_MISMATCH');
  });
});

describe('bundles', () => {
  it('prove a record, and a never-audited domain, offline against the key set and the log key', async () => {
    const gold = await bundleFor(stack.records, stack.proofs, GOLD);
    expect(gold).toMatchObject({ domain: GOLD, absence: null });
    expect(verdictOf(verifyBundle({ bundle: gold, domain: GOLD, keySet, log, now: DEC }))).toEqual({
      valid: true,
      code: null,
      message: null,
    });
    const never = await bundleFor(stack.records, stack.proofs, UNAUDITED);
    expect(verdictOf(verifyBundle({ bundle: never, domain: UNAUDITED, keySet, log, now: DEC })).code).toBe('NEVER_AUDITED');
    expect(verdictOf(verifyBundle({ bundle: gold, domain: OTHER, keySet, log, now: DEC })).code).toBe('DOMAIN_MISMATCH');
  });
});

describe('the kept builds', () => {
  it('lists them newest first, the live one first', async () => {
    expect((await stack.history.builds()).map((b) => b.id)).toEqual([dec, nov]);
  });

  it("answers a domain's history, one entry a build that has its record, newest first", async () => {
    const history = await stack.history.history(GOLD);
    expect(history.domain).toBe(GOLD);
    expect(history.entries.map((e) => e.build)).toEqual([dec, nov]);
    expect((await stack.history.history(UNAUDITED)).entries).toEqual([]);
  });

  it('serves a kept build its own record, verified, and BUILD_NOT_FOUND for a build it does not keep', async () => {
    const then = JSON.parse((await stack.history.recordIn(nov, GOLD)).bytes.toString('utf8'));
    expect(then.issued_at).toBe(new Date(NOV).toISOString());
    expect(verifyRecord(then, keySet)).toMatchObject({ valid: true });
    await expect(stack.history.recordIn('2020-01-01T000000Z-nope', GOLD)).rejects.toMatchObject({ code: 'BUILD_NOT_FOUND' });
  });

  it('says what changed since the build before (a build of the same audits changes no verdict), and refuses an unknown one', async () => {
    expect(await stack.history.changes(nov, undefined)).toMatchObject({ from: nov, to: dec, changes: [], next: null });
    await expect(stack.history.changes('2020-01-01T000000Z-nope', undefined)).rejects.toMatchObject({ code: 'BUILD_NOT_FOUND' });
  });
});
