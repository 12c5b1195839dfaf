/**
 * Readers for what a build leaves on disk, independent of the code that wrote it: snapshots of
 * folders (to prove nothing changed), the live build's record files and the published key set.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readlinkSync } from 'node:fs';
import { readdir, readFile, readlink, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { KEY_SET_PATH, type KeySet, parseKeySet } from '@merchant-verify/verifier';
import type { SigningKey } from '../../core/crypto/signing.ts';
import { CURRENT_LINK, isRecordFile, MANIFEST_FILE } from '../../core/layout.ts';
import { type Manifest, parseManifest } from '../../core/schemas/manifest.ts';
import { loadActiveKey } from '../../keyring/signing-keys.ts';
import { livePackedRecords, liveRecordBytes } from './packs.ts';
import type { Project } from './project.ts';

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Every entry under a folder (without following symlinks): `dir`, `link:<target>` or
 * `file:<sha256>`, keyed by relative path. Equal snapshots mean nothing was added, removed,
 * repointed or rewritten. A missing folder gives `{}`.
 */
export async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (abs: string, rel: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(abs, { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const a = join(abs, e.name),
        r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isSymbolicLink()) out[r] = `link:${await readlink(a)}`;
      else if (e.isDirectory()) {
        out[r] = 'dir';
        await walk(a, r);
      } else out[r] = `file:${sha256(await readFile(a))}`;
    }
  };
  await walk(dir, '');
  return out;
}

/** Snapshots of a project's records/ and public/ folders. */
export async function snapshotOutputs(p: {
  recordsDir: string;
  publicDir: string;
}): Promise<{ records: Record<string, string>; public: Record<string, string> }> {
  return { records: await snapshot(p.recordsDir), public: await snapshot(p.publicDir) };
}

/**
 * Every file under a folder, relative path -> absolute path. The folder itself may be a symlink
 * (records/current); symlinks inside it are skipped (records/current when listing records/).
 */
export async function listFiles(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (abs: string, rel: string): Promise<void> => {
    for (const e of await readdir(abs, { withFileTypes: true })) {
      const a = join(abs, e.name),
        r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isSymbolicLink()) continue;
      if (e.isDirectory()) await walk(a, r);
      else out.set(r, a);
    }
  };
  await walk(dir, '');
  return out;
}

export interface RecordFile {
  text: string;
  record: Record<string, unknown>;
}

/** The live build's records as its packs hold them, by the domain in each record. */
export async function readCurrentRecords(recordsDir: string): Promise<Map<string, RecordFile>> {
  const out = new Map<string, RecordFile>();
  for (const bytes of await livePackedRecords({ recordsDir })) {
    const text = bytes.toString('utf8');
    const record = JSON.parse(text) as Record<string, unknown>;
    out.set(String(record.domain), { text, record });
  }
  return out;
}

/** The live build's per-record tree (`ab/<domain>.json`, written by a build with `tree`), by the domain in each record, with each file's path. */
export async function readRecordTree(recordsDir: string): Promise<Map<string, RecordFile & { rel: string }>> {
  const out = new Map<string, RecordFile & { rel: string }>();
  for (const [rel, abs] of await listFiles(join(recordsDir, CURRENT_LINK))) {
    if (!isRecordFile(rel)) continue;
    const text = await readFile(abs, 'utf8');
    const record = JSON.parse(text) as Record<string, unknown>;
    out.set(String(record.domain), { rel, text, record });
  }
  return out;
}

/** The live build's files (records and manifest) as text, by path relative to records/current. */
export async function readCurrentFiles(recordsDir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const [rel, abs] of await listFiles(join(recordsDir, CURRENT_LINK))) out.set(rel, await readFile(abs, 'utf8'));
  return out;
}

/** The published key set: its text and its parsed (and checked) form. */
export async function readKeySet(publicDir: string): Promise<{ text: string; keySet: KeySet }> {
  const text = await readFile(join(publicDir, KEY_SET_PATH), 'utf8');
  return { text, keySet: parseKeySet(JSON.parse(text)) };
}

/** Where records/current points (relative link text). */
export function currentTarget(recordsDir: string): Promise<string> {
  return readlink(join(recordsDir, CURRENT_LINK));
}

/** One record as stored: its exact bytes, its text and its parsed form. */
export interface StoredRecord {
  bytes: Buffer;
  text: string;
  record: Record<string, unknown>;
}

/** The live record of a domain, as its pack holds it. */
export async function liveRecord(p: Project, domain: string): Promise<StoredRecord> {
  const bytes = await liveRecordBytes(p, domain);
  const text = bytes.toString('utf8');
  return { bytes, text, record: JSON.parse(text) as Record<string, unknown> };
}

/** The live build's manifest, read with its schema. */
export async function liveManifest(p: Project): Promise<Manifest> {
  return parseManifest(await readFile(join(p.recordsDir, CURRENT_LINK, MANIFEST_FILE)), MANIFEST_FILE);
}

/** Every record of the live build, by domain, read from its packs: exactly the bytes the gateway must serve. */
export async function liveRecords(p: Project): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  for (const record of await livePackedRecords(p)) out.set((JSON.parse(record.toString('utf8')) as { domain: string }).domain, record);
  return out;
}

/** The published key set file: its bytes and parsed form. */
export async function publishedKeySet(p: Project): Promise<{ bytes: Buffer; keySet: KeySet }> {
  const bytes = await readFile(p.keySetFile);
  return { bytes, keySet: parseKeySet(JSON.parse(bytes.toString('utf8'))) };
}

/** The active signing key of the project. */
export async function activeSigner(p: Project): Promise<SigningKey> {
  const key = await loadActiveKey(p.keysDir, undefined);
  if (!key) throw new Error('project has no active signing key');
  return key;
}

/**
 * Every regular file under `dir` (recursively), by absolute path; symlinks are followed and
 * resolved, each real file listed once: what a secret scan reads, so a link out of the folder is
 * scanned too.
 */
export async function allFiles(dir: string): Promise<string[]> {
  const seen = new Set<string>();
  const walk = async (abs: string): Promise<void> => {
    const real = await realpath(abs).catch(() => null);
    if (real === null || seen.has(real)) return;
    seen.add(real);
    for (const e of await readdir(abs, { withFileTypes: true })) {
      const p = join(abs, e.name);
      if (e.isDirectory() || e.isSymbolicLink()) {
        const target = await realpath(p).catch(() => null);
        if (target === null) continue;
        const entries = await readdir(target).catch(() => null);
        if (entries === null) {
          if (!seen.has(target)) {
            seen.add(target);
            files.push(target);
          }
          continue;
        }
        await walk(p);
      } else if (e.isFile()) {
        const r = await realpath(p);
        if (!seen.has(r)) {
          seen.add(r);
          files.push(r);
        }
      }
    }
  };
  const files: string[] = [];
  await walk(dir);
  return files;
}

/** The files this process holds open under `dir` (a file removed since still holds its bytes). */
export function filesHeldOpenUnder(dir: string): string[] {
  const held: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    const target = readlinkSafe(`/proc/self/fd/${fd}`);
    if (target?.startsWith(`${dir}/`)) held.push(target);
  }
  return held;
}

function readlinkSafe(path: string): string | null {
  try {
    return readlinkSync(path);
  } catch {
    return null; // closed since it was listed
  }
}
