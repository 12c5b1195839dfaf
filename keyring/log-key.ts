import { createHmac, type KeyObject, sign } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type Checkpoint,
  formatVerifierKey,
  isKeyName,
  type NoteVerifierKey,
  noteKeyId,
  openNote,
  parseCheckpoint,
  parseVerifierKey,
  signatureLine,
} from '#shared';
import { verifyEd25519 } from '../core/crypto/ed25519.ts';
import { sha256 } from '../core/crypto/hash.ts';
import {
  ed25519FromSeed,
  formatNotePrivateKey,
  newEd25519Seed,
  parseNotePrivateKey,
  writeNewKeyFile,
} from '../core/crypto/note-private-key.ts';
import { ConfigError, InvalidKeyError, LogInconsistentError } from '../core/errors/errors.ts';

/** The log key's file under the keys folder (mode 0600). */
export const LOG_KEY_FILE = 'log.key';

/**
 * The log's own Ed25519 key, apart from the record key: it signs checkpoints, and derives each
 * record's salt. Stored as a signed-note private key, `PRIVATE+KEY+<name>+<key ID>+<base64(0x01 ||
 * seed)>` (the form Go's golang.org/x/mod/sumdb/note reads), so any note tool can use it too.
 */
export interface LogKey {
  name: string;
  id: number;
  privateKey: KeyObject;
  publicKey: Uint8Array;
  /** The verifier key in note form, published at /.well-known/merchant-verify-log.vkey. */
  vkey: string;
  verifierKey: NoteVerifierKey;
  /** Derives the salt of each record (HMAC-SHA256 keyed from the private key: reproducible, secret). */
  saltKey: Buffer;
}

const ED25519 = 1;

/** The log's key name (and checkpoint origin) for an issuer: `<issuer>/log`. */
export const logOrigin = (issuer: string) => `${issuer}/log`;

export function generateLogKeyText(name: string): string {
  if (!isKeyName(name)) throw new ConfigError(`"${name}" cannot be a log key name (no spaces or "+")`);
  const seed = newEd25519Seed();
  return formatNotePrivateKey(name, fromSeed(name, seed).id, ED25519, seed);
}

export function parseLogKey(text: string, where: string): LogKey {
  const what = 'a log key (PRIVATE+KEY+<name>+<key ID>+<Ed25519 seed>; make one with "mvr keygen --log")';
  const { name, seed } = parseNotePrivateKey(text, where, ED25519, what, (n, s) => fromSeed(n, s).id);
  return fromSeed(name, seed);
}

function fromSeed(name: string, seed: Uint8Array): LogKey {
  const { privateKey, publicKey } = ed25519FromSeed(seed);
  const id = noteKeyId(sha256, name, publicKey);
  const verifierKey = { name, id, publicKey };
  return {
    name,
    id,
    privateKey,
    publicKey,
    vkey: formatVerifierKey(verifierKey),
    verifierKey,
    saltKey: createHmac('sha256', seed).update('merchant-verify log salt v1').digest(),
  };
}

/** Signs a note text with the log key: the text, a blank line, the signature line. */
export function signNote(key: LogKey, text: string): string {
  return `${text}\n${signatureLine(key, sign(null, Buffer.from(text), key.privateKey))}`;
}

/** Opens a signed note with a verifier key (the service's Ed25519 check); throws NoteError when it does not verify. */
export function openNoteWith(note: string, key: NoteVerifierKey): string {
  return openNote(note, [key], verifyEd25519);
}

/** A checkpoint opened with the log's verifier key, of the log's origin (the key's name); anything else is not this log's. */
export function openCheckpoint(note: string, vkey: NoteVerifierKey, where: string): Checkpoint {
  let checkpoint: Checkpoint;
  try {
    checkpoint = parseCheckpoint(openNoteWith(note, vkey));
  } catch (error) {
    throw new LogInconsistentError(`${where} is not a checkpoint signed by ${vkey.name}: ${(error as Error).message}`);
  }
  if (checkpoint.origin !== vkey.name)
    throw new LogInconsistentError(`${where} is a checkpoint of "${checkpoint.origin}", not "${vkey.name}"`);
  return checkpoint;
}

export function parseVkey(text: string, where: string): NoteVerifierKey {
  try {
    return parseVerifierKey(sha256, text);
  } catch (error) {
    throw new InvalidKeyError(`${where}: ${(error as Error).message}`);
  }
}

/** A record's salt: 32 bytes, the same for the same log key, build time and domain, secret without the key. */
export function saltOf(key: LogKey, issuedAt: string, domain: string): Buffer {
  return createHmac('sha256', key.saltKey).update(`${issuedAt}\n${domain}`).digest();
}

/** Creates the log key (0600) under the keys folder; refuses to replace one (a log keeps its key). */
export async function createLogKey(keysDir: string, name: string): Promise<LogKey> {
  const text = generateLogKeyText(name);
  const file = await writeNewKeyFile(
    keysDir,
    LOG_KEY_FILE,
    text,
    'a log keeps its key (its checkpoints are verified with it); remove the file only to start a new log',
  );
  return parseLogKey(text, file);
}

/** The log key: `MVR_LOG_KEY` (CI secret) wins over keys/log.key; null when neither is set. */
export async function loadLogKey(keysDir: string, envKey: string | undefined): Promise<LogKey | null> {
  if (envKey && envKey.trim() !== '') return parseLogKey(envKey, 'MVR_LOG_KEY');
  const file = join(keysDir, LOG_KEY_FILE);
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  return text === null ? null : parseLogKey(text, file);
}
