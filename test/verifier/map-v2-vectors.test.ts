/**
 * The v2 map vectors (test/vectors/map-v2/map-v2.json, written by map-v2.gen.ts): the map's leaves
 * are the records' entries and hash to the statement's root; an entry's own record and the genuine
 * absence proof pass; the record of the build before, junk, and an altered neighbour entry are
 * refused with the code each names. The vectors are made again and must be
 * the same bytes. Every check runs through the package's compiled JavaScript, as a user's code calls it.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type EntryVerdict, parseKeySet, recordMatchesEntry, verifyAbsence } from '@merchant-verify/verifier';
import { describe, expect, it } from 'vitest';
import { canonicalBytes, DomainMap, ENTRY_SIZE, encodeMapEntry, treeHasher } from '#shared';
import { sha256 } from '../../core/crypto/hash.ts';

const file = join(import.meta.dirname, '../vectors/map-v2/map-v2.json');
const v = JSON.parse(readFileSync(file, 'utf8')) as {
  key_set: unknown;
  now: number;
  entry_size: number;
  records: Record<string, unknown>[];
  leaves: string[];
  statement: { schema: string; domain_map: { size: number; root: string } };
  cases: { name: string; kind: 'entry' | 'absence'; domain: string; input: unknown; code: string | null }[];
};

describe('map v2 vectors', () => {
  it("the leaves are the records' entries, sorted by domain hash, and hash to the statement's root", async () => {
    expect(v.entry_size).toBe(ENTRY_SIZE);
    expect(v.statement.schema).toMatch(/\/schemas\/build\/v2$/);
    const entries = v.records.map((r) => Buffer.from(encodeMapEntry(sha256, r, canonicalBytes(r)) as Uint8Array));
    const sorted = entries.sort((a, b) => Buffer.compare(a.subarray(0, 32), b.subarray(0, 32)));
    expect(sorted.map((e) => e.toString('base64'))).toEqual(v.leaves);
    const map = await DomainMap.fromLeaves(treeHasher(sha256), Buffer.concat(sorted), { leafSize: ENTRY_SIZE });
    expect(map.head()).toEqual(v.statement.domain_map);
  });

  it.each(v.cases.map((c) => [c.name, c] as const))('%s', (_, c) => {
    if (c.kind === 'entry') {
      const { entry, record } = c.input as { entry: string; record: unknown };
      expect(recordMatchesEntry({ entry } as EntryVerdict, record)?.code ?? null).toBe(c.code);
    } else {
      const result = verifyAbsence(c.input, c.domain, parseKeySet(v.key_set));
      expect(result.valid ? 'NEVER_AUDITED' : result.code).toBe(c.code);
    }
  });

  it('covers both verdicts and every refusal a v2 map adds', () => {
    const codes = new Set(v.cases.map((c) => c.code));
    for (const code of [null, 'NEVER_AUDITED', 'RECORD_NOT_IN_MAP', 'NOT_ABSENT']) expect(codes.has(code)).toBe(true);
  });

  it('is what the generator writes', () => {
    const before = readFileSync(file, 'utf8');
    execFileSync(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '../vectors/map-v2/map-v2.gen.ts')]);
    expect(readFileSync(file, 'utf8')).toBe(before);
  });
});
