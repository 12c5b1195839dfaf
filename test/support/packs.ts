/**
 * A build's records as the service reads them: ranges of its packs (`packs/<sha256>.jsonl`),
 * placed by the domain map and the pack index. Tests read a live record's bytes here and tamper
 * with them here, inside its pack, the way a bad disk or a bad copy would.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { domainHash, packPath, packsHeadOf, type RecordPlace, recordPlace } from '@merchant-verify/verifier/internal/issuer';
import { sha256 } from '../../core/hash.ts';
import { BUILD_STATEMENT_FILE, CURRENT_LINK, DOMAIN_MAP_FILE, PACK_INDEX_FILE } from '../../core/layout.ts';
import { leafIndex } from '../../service/build-maps.ts';
import type { Project } from './project.ts';

type Records = Pick<Project, 'recordsDir'>;

/** Where a (normalized) domain's record is in the live build: its pack's file and the range of its bytes. */
export async function livePlace(p: Records, domain: string): Promise<RecordPlace & { file: string }> {
  const dir = join(p.recordsDir, CURRENT_LINK);
  const statement = JSON.parse(await readFile(join(dir, BUILD_STATEMENT_FILE), 'utf8')) as unknown;
  const packs = packsHeadOf(statement);
  if (!packs || typeof packs === 'string') throw new Error(`the live build in ${p.recordsDir} has no packs: ${packs}`);
  const index = leafIndex(await readFile(join(dir, DOMAIN_MAP_FILE)), domainHash(sha256, domain));
  if (index < 0) throw new Error(`${domain} is not in the live build's domain map`);
  const place = recordPlace(await readFile(join(dir, PACK_INDEX_FILE)), packs.records_per_pack, index);
  return { ...place, file: join(dir, packPath(packs.files[place.pack]!.sha256)) };
}

/** The pack file holding a domain's live record (a test replaces it with a FIFO, a folder...). */
export async function livePackFile(p: Records, domain: string): Promise<string> {
  return (await livePlace(p, domain)).file;
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
 * build (its pack index in memory) or taking it afresh reads the other records as before. `bytes`
 * longer than the record cannot be placed so: an error. Returns the bytes now stored.
 */
export async function replaceLiveRecord(p: Records, domain: string, bytes: string | Buffer): Promise<Buffer> {
  const { file, start, length } = await livePlace(p, domain);
  const body = Buffer.from(bytes);
  if (body.length > length) throw new Error(`${body.length} bytes do not fit in the ${length} of ${domain}'s record`);
  const stored = Buffer.concat([body, Buffer.alloc(length - body.length, 0x20)]);
  const pack = await readFile(file);
  stored.copy(pack, start);
  await writeFile(file, pack);
  return stored;
}

/** Edits a live record in its pack: `edit` gets the record parsed and returns its new text (see {@link replaceLiveRecord}). */
export async function editLiveRecord(p: Records, domain: string, edit: (record: Record<string, unknown>) => string): Promise<Buffer> {
  const record = JSON.parse((await liveRecordBytes(p, domain)).toString('utf8')) as Record<string, unknown>;
  return replaceLiveRecord(p, domain, edit(record));
}
