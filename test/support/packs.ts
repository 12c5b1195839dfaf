/**
 * A build's records as the service reads them: ranges of its packs (`packs/<sha256>.jsonl`),
 * placed by the domain map and the pack index. Tests read a live record's bytes here and tamper
 * with them here, inside its pack, the way a bad disk or a bad copy would.
 */
import { open, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type BuildStatement,
  DomainMap,
  domainHash,
  ENTRY_SIZE,
  type PacksHead,
  packPath,
  packsHeadOf,
  type RecordPlace,
  recordPlace,
  splitPack,
  statementLeafSize,
  statementText,
} from '#shared';
import { hasher, sha256 } from '../../core/crypto/hash.ts';
import { type SigningKey, signRecord } from '../../core/crypto/signing.ts';
import { BUILD_STATEMENT_FILE, CURRENT_LINK, DOMAIN_MAP_FILE, PACK_INDEX_FILE } from '../../core/layout.ts';
import type { Project } from './project.ts';

type Records = Pick<Project, 'recordsDir'>;

/** Where a (normalized) domain's record is in the live build: its pack's file and the range of its bytes. */
export function livePlace(p: Records, domain: string): Promise<RecordPlace & { file: string; path: string }> {
  return placeIn(join(p.recordsDir, CURRENT_LINK), domain);
}

/** Where a domain's record is in the build in folder `dir`: its pack's file, its path in the build, and the range of its bytes. */
export async function placeIn(dir: string, domain: string): Promise<RecordPlace & { file: string; path: string }> {
  const statement = JSON.parse(await readFile(join(dir, BUILD_STATEMENT_FILE), 'utf8')) as unknown;
  const packs = packsHeadOf(statement);
  if (!packs || typeof packs === 'string') throw new Error(`the build in ${dir} has no packs: ${packs}`);
  const leafSize = statementLeafSize((statement as { schema?: unknown }).schema) ?? 32;
  const map = await DomainMap.fromLeaves(hasher, await readFile(join(dir, DOMAIN_MAP_FILE)), { leafSize });
  const { found, index } = map.search(domainHash(sha256, domain));
  if (!found) throw new Error(`${domain} is not in the domain map of ${dir}`);
  const place = recordPlace(await readFile(join(dir, PACK_INDEX_FILE)), packs.records_per_pack, index);
  const path = packPath(packs.files[place.pack]!.sha256);
  return { ...place, path, file: join(dir, path) };
}

/** The pack file holding a domain's live record (a test replaces it with a FIFO, a folder...). */
export async function livePackFile(p: Records, domain: string): Promise<string> {
  return (await livePlace(p, domain)).file;
}

/** Every record of the live build, in map order, from its packs. */
export async function livePackedRecords(p: Records): Promise<Buffer[]> {
  const dir = join(p.recordsDir, CURRENT_LINK);
  const packs = packsHeadOf(JSON.parse(await readFile(join(dir, BUILD_STATEMENT_FILE), 'utf8')) as unknown);
  if (!packs || typeof packs === 'string') throw new Error(`the live build in ${p.recordsDir} has no packs: ${packs}`);
  const records: Buffer[] = [];
  for (const { sha256 } of packs.files) {
    const lines = splitPack(await readFile(join(dir, packPath(sha256))));
    if (typeof lines === 'string') throw new Error(`${packPath(sha256)}: ${lines}`);
    records.push(...lines.map((line) => Buffer.from(line)));
  }
  return records;
}

/** A live record's exact bytes, from its pack. */
export async function liveRecordBytes(p: Records, domain: string): Promise<Buffer> {
  const { file, start, length } = await livePlace(p, domain);
  return (await readFile(file)).subarray(start, start + length);
}

/**
 * Replaces a live record's bytes inside its pack with `bytes`, padded with spaces (JSON's blank)
 * to the record's length, so the pack keeps its length and every other record its range: the pack
 * index and the statement, which signs each pack's length, still agree, and a gateway serving the
 * build (its pack index in memory) or taking it afresh reads the other records as before, at every
 * instant (only the record's range is written, in place, as a bad disk would). `bytes`
 * longer than the record cannot be placed so: an error. Returns the bytes now stored.
 */
export async function replaceLiveRecord(p: Records, domain: string, bytes: string | Buffer): Promise<Buffer> {
  const { file, start, length } = await livePlace(p, domain);
  const body = Buffer.from(bytes);
  if (body.length > length) throw new Error(`${body.length} bytes do not fit in the ${length} of ${domain}'s record`);
  const stored = Buffer.concat([body, Buffer.alloc(length - body.length, 0x20)]);
  // Written in place, over the record's range alone: rewriting the whole pack (writeFile truncates
  // it first) would leave every other record of the pack short for a moment, so a reader at that
  // moment would rightly refuse records this never meant to damage.
  const handle = await open(file, 'r+');
  try {
    await handle.write(stored, 0, length, start);
  } finally {
    await handle.close();
  }
  return stored;
}

/** Edits a live record in its pack: `edit` gets the record parsed and returns its new text (see {@link replaceLiveRecord}). */
export async function editLiveRecord(p: Records, domain: string, edit: (record: Record<string, unknown>) => string): Promise<Buffer> {
  const record = JSON.parse((await liveRecordBytes(p, domain)).toString('utf8')) as Record<string, unknown>;
  return replaceLiveRecord(p, domain, edit(record));
}

/**
 * Rewrites a live record of an unsigned build with bytes of any length: its pack, the pack index
 * offsets of the records after it (so they stay readable) and the pack's length in the build
 * statement. Only for a build taken afresh (a gateway holds the pack index it took), and only for
 * an unsigned build: a signed statement signs every pack's length, so there use
 * {@link replaceLiveRecord}.
 */
export async function rewriteUnsignedRecord(p: Records, domain: string, bytes: string | Buffer): Promise<void> {
  const dir = join(p.recordsDir, CURRENT_LINK);
  const statementFile = join(dir, BUILD_STATEMENT_FILE);
  const statement = JSON.parse(await readFile(statementFile, 'utf8')) as { signature?: string; packs: PacksHead };
  if (statement.signature !== undefined) throw new Error("a signed statement signs its packs' lengths: use replaceLiveRecord");
  const { file, start, length, pack } = await livePlace(p, domain);
  const body = Buffer.from(bytes);
  const old = await readFile(file);
  await writeFile(file, Buffer.concat([old.subarray(0, start), body, old.subarray(start + length)]));
  const delta = body.length - length;
  const index = await readFile(join(dir, PACK_INDEX_FILE));
  const perPack = statement.packs.records_per_pack;
  for (let i = pack * perPack; i < Math.min((pack + 1) * perPack, index.length / 4); i++) {
    const end = index.readUInt32BE(i * 4);
    if (end > start) index.writeUInt32BE(end + delta, i * 4);
  }
  await writeFile(join(dir, PACK_INDEX_FILE), index);
  statement.packs.files[pack]!.bytes += delta;
  await writeFile(statementFile, JSON.stringify(statement));
}

/**
 * Turns the build in folder `dir` into the v1 build it would have been before map entries: its
 * domain map the domain hashes alone (the first 32 bytes of each entry), its statement of schema
 * .../build/v1 with that map's root, signed again with `key` (null: left unsigned). Its records and
 * packs stay as they are. What a gateway meets in a build kept from before entries.
 */
export async function rewriteAsV1Build(dir: string, key: SigningKey | null): Promise<void> {
  const entries = await readFile(join(dir, DOMAIN_MAP_FILE));
  const leaves = Buffer.alloc((entries.length / ENTRY_SIZE) * 32);
  for (let i = 0; i < leaves.length / 32; i++) entries.copy(leaves, i * 32, i * ENTRY_SIZE, i * ENTRY_SIZE + 32);
  const map = await DomainMap.fromLeaves(hasher, leaves);
  const { key_id: _k, signature: _s, ...statement } = JSON.parse(await readFile(join(dir, BUILD_STATEMENT_FILE), 'utf8')) as BuildStatement;
  const v1 = { ...statement, schema: statement.schema.replace(/\/v2$/, '/v1'), domain_map: map.head() };
  await writeFile(join(dir, DOMAIN_MAP_FILE), leaves);
  await writeFile(join(dir, BUILD_STATEMENT_FILE), statementText(key ? signRecord(v1, key) : v1));
}
