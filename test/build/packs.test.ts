import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ENTRY_SIZE,
  encodeMapEntry,
  PACK_RECORDS_MIN,
  PACKS_MAX,
  packCount,
  packIndexBytes,
  packIndexProblem,
  packPath,
  packsHeadOf,
  recordPlace,
  recordsPerPackFor,
  splitPack,
} from '#shared';
import { verifyRecordNode } from '../../core/crypto/signing.ts';
import { BUILD_STATEMENT_FILE, CURRENT_LINK, DOMAIN_MAP_FILE, PACK_INDEX_FILE, PACKS_DIR } from '../../core/layout.ts';
import { readKeySet, readRecordTree } from '../support/outputs.ts';
import { build, makeProject, type Project, removeTempDirs } from '../support/project.ts';

const sha256 = (bytes: Uint8Array | string) => createHash('sha256').update(bytes).digest();

describe('a build written as packs (--pack-records 2)', () => {
  let p: Project;
  let live: string;
  let statement: Record<string, unknown> & { records: number };
  let summary: Awaited<ReturnType<typeof build>>;

  beforeAll(async () => {
    p = await makeProject({ samples: true, sign: true, build: false });
    summary = await build(p, { packRecords: 2, tree: true });
    live = join(p.recordsDir, CURRENT_LINK);
    statement = JSON.parse(await readFile(join(live, BUILD_STATEMENT_FILE), 'utf8'));
  });
  afterAll(removeTempDirs);

  it('names every pack by the SHA-256 of its bytes, with its length, in the signed statement', async () => {
    const head = packsHeadOf(statement);
    if (head === null || typeof head === 'string') throw new Error(`no packs in the statement: ${head}`);
    expect(head.records_per_pack).toBe(2);
    expect(head.files).toHaveLength(Math.ceil(statement.records / 2));
    const onDisk = (await readdir(join(live, PACKS_DIR))).sort();
    expect(onDisk).toEqual(head.files.map((f) => packPath(f.sha256).slice(PACKS_DIR.length + 1)).sort());
    for (const f of head.files) {
      const bytes = await readFile(join(live, packPath(f.sha256)));
      expect(bytes.length).toBe(f.bytes);
      expect(sha256(bytes).toString('hex')).toBe(f.sha256);
    }
    const { keySet } = await readKeySet(p.publicDir);
    expect(verifyRecordNode(statement, keySet)).toMatchObject({ valid: true });
    // The build's summary (`mvr build --json`) counts the same packs and bytes.
    expect(summary.packs).toMatchObject({
      files: head.files.length,
      bytes: head.files.reduce((sum, f) => sum + f.bytes, 0),
      recordsPerPack: 2,
    });
  });

  it("holds every record's exact bytes once, in the domain map's order", async () => {
    const head = packsHeadOf(statement) as Exclude<ReturnType<typeof packsHeadOf>, string | null>;
    const map = await readFile(join(live, DOMAIN_MAP_FILE));
    const tree = await readRecordTree(p.recordsDir);
    const records: Buffer[] = [];
    for (const f of head.files) {
      const lines = splitPack(await readFile(join(live, packPath(f.sha256))));
      if (typeof lines === 'string') throw new Error(lines);
      records.push(...lines.map((l) => Buffer.from(l)));
    }
    expect(records).toHaveLength(tree.size);
    expect(map.length).toBe(records.length * ENTRY_SIZE);
    records.forEach((bytes, i) => {
      const record = JSON.parse(bytes.toString()) as { domain: string };
      // Leaf i is the record's entry: its domain hash, the hash of these exact bytes, its verdict.
      const entry = map.subarray(i * ENTRY_SIZE, (i + 1) * ENTRY_SIZE);
      expect(entry.subarray(0, 32).equals(sha256(record.domain))).toBe(true);
      expect(Buffer.from(encodeMapEntry(sha256, record, bytes) as Uint8Array).equals(entry)).toBe(true);
      expect(bytes.toString()).toBe(tree.get(record.domain)!.text);
    });
  });

  it('finds each record with the pack index: its pack, then one range', async () => {
    const head = packsHeadOf(statement) as Exclude<ReturnType<typeof packsHeadOf>, string | null>;
    const index = await readFile(join(live, PACK_INDEX_FILE));
    expect(packIndexProblem(index, head, statement.records)).toBeNull();
    const tree = await readRecordTree(p.recordsDir);
    const map = await readFile(join(live, DOMAIN_MAP_FILE));
    for (let i = 0; i < statement.records; i++) {
      const { pack, start, length } = recordPlace(index, head.records_per_pack, i);
      const bytes = (await readFile(join(live, packPath(head.files[pack]!.sha256)))).subarray(start, start + length);
      const domain = JSON.parse(bytes.toString()).domain as string;
      expect(sha256(domain).equals(map.subarray(i * ENTRY_SIZE, i * ENTRY_SIZE + 32))).toBe(true);
      expect(bytes.toString()).toBe(tree.get(domain)!.text);
    }
  });

  it('rebuilds the same pack index from the packs alone (as a mirror does)', async () => {
    const head = packsHeadOf(statement) as Exclude<ReturnType<typeof packsHeadOf>, string | null>;
    const ends: number[] = [];
    for (const f of head.files) {
      const lines = splitPack(await readFile(join(live, packPath(f.sha256))));
      if (typeof lines === 'string') throw new Error(lines);
      let end = 0;
      for (const line of lines) ends.push((end += line.length + 1));
    }
    const rebuilt = Buffer.from(packIndexBytes(Uint32Array.from(ends)));
    expect(rebuilt.equals(await readFile(join(live, PACK_INDEX_FILE)))).toBe(true);
  });

  it('refuses a pack index that does not match the statement, naming where', async () => {
    const head = packsHeadOf(statement) as Exclude<ReturnType<typeof packsHeadOf>, string | null>;
    const index = Buffer.from(await readFile(join(live, PACK_INDEX_FILE)));
    expect(packIndexProblem(index.subarray(4), head, statement.records)).toMatch(/not 4 for each of/);
    index.writeUInt32BE(index.readUInt32BE(4) + 1, 4);
    expect(packIndexProblem(index, head, statement.records)).toMatch(/^pack 0 ends at/);
  });
});

describe('pack sizes and statement shapes', () => {
  it('keeps at least 4096 records a pack and at most 256 packs', () => {
    expect(recordsPerPackFor(0)).toBe(PACK_RECORDS_MIN);
    expect(recordsPerPackFor(100_000)).toBe(4096);
    expect(packCount(1_000_000, recordsPerPackFor(1_000_000))).toBe(245);
    expect(packCount(10_000_000, recordsPerPackFor(10_000_000))).toBe(PACKS_MAX);
    expect(packCount(0, 4096)).toBe(0);
  });

  it("names what is wrong with a statement's packs", () => {
    const files = [{ sha256: 'a'.repeat(64), bytes: 10 }];
    expect(packsHeadOf({ records: 3 })).toBeNull();
    expect(packsHeadOf({ records: 3, packs: { records_per_pack: 4, files } })).toEqual({ records_per_pack: 4, files });
    expect(packsHeadOf({ records: 5, packs: { records_per_pack: 4, files } })).toMatch(/1 packs, but 5 records at 4 a pack make 2/);
    expect(packsHeadOf({ records: 3, packs: { records_per_pack: 0, files } })).toMatch(/records_per_pack/);
    expect(packsHeadOf({ records: 3, packs: { records_per_pack: 4, files: [{ sha256: 'A'.repeat(64), bytes: 1 }] } })).toMatch(
      /files\[0\]\.sha256/,
    );
    expect(packsHeadOf({ records: 3, packs: { records_per_pack: 4, files: [{ sha256: 'a'.repeat(64), bytes: -1 }] } })).toMatch(
      /files\[0\]\.bytes/,
    );
  });

  it('splits a pack into its lines, and refuses a torn or blank one', () => {
    const lines = splitPack(Buffer.from('{"a":1}\n{"b":2}\n'));
    expect(typeof lines === 'string' ? lines : lines.map((l) => Buffer.from(l).toString())).toEqual(['{"a":1}', '{"b":2}']);
    expect(splitPack(Buffer.from('{"a":1}\n{"b":2}'))).toMatch(/does not end with a newline/);
    expect(splitPack(Buffer.from('{"a":1}\n\n'))).toMatch(/empty line at byte 8/);
  });
});
