import { createHmac, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { mkdir, open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError, InvalidKeyError, LogInconsistentError } from '../core/errors.ts';
import { decodeBase64, encodeBase64 } from '@merchant-verify/verifier/tlog';
import { parseCheckpoint, type Checkpoint } from '@merchant-verify/verifier/tlog';
import { sha256 } from '../core/hash.ts';
import { formatVerifierKey, isKeyName, noteKeyId, openNote, parseVerifierKey, signatureLine, type NoteVerifierKey } from '@merchant-verify/verifier/tlog';


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
/** PKCS#8 DER of an Ed25519 private key is this prefix, then the 32-byte seed. */
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** The log's key name (and checkpoint origin) for an issuer: `<issuer>/log`. */
export const logOrigin = (issuer: string) => `${issuer}/log`;

export function generateLogKeyText(name: string): string {
  if (!isKeyName(name)) throw new ConfigError(`"${name}" cannot be a log key name (no spaces or "+")`);
  const { privateKey } = generateKeyPairSync('ed25519');
  const seed = privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(PKCS8_PREFIX.length);
  return formatPrivateKey(name, seed);
}

function formatPrivateKey(name: string, seed: Uint8Array): string {
  const key = fromSeed(name, seed);
  return `PRIVATE+KEY+${name}+${key.id.toString(16).padStart(8, '0')}+${encodeBase64(Uint8Array.of(ED25519, ...seed))}`;
}

export function parseLogKey(text: string, where: string): LogKey {
  const m = /^PRIVATE\+KEY\+([^+\s]+)\+([0-9a-f]{8})\+(\S+)$/.exec(text.trim());
  const material = m ? decodeBase64(m[3]!) : null;
  if (!m || !material || material.length !== 33 || material[0] !== ED25519) {
    throw new InvalidKeyError(`${where} is not a log key (PRIVATE+KEY+<name>+<key ID>+<Ed25519 seed>; make one with "mvr keygen --log")`);
  }
  const key = fromSeed(m[1]!, material.subarray(1));
  if (key.id !== Number.parseInt(m[2]!, 16)) throw new InvalidKeyError(`${where}: key ID ${m[2]} does not match the key's name and public key`);
  return key;
}

function fromSeed(name: string, seed: Uint8Array): LogKey {
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const publicKey = new Uint8Array(Buffer.from(createPublicKey(privateKey).export({ format: 'jwk' }).x!, 'base64url'));
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

/** Opens a signed note with a verifier key (node:crypto Ed25519); throws NoteError when it does not verify. */
export function openNoteWith(note: string, key: NoteVerifierKey): string {
  return openNote(note, [key], (signature, message, publicKey) => {
    try {
      return verify(null, message, createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey).toString('base64url') }, format: 'jwk' }), signature);
    } catch {
      return false;
    }
  });
}

/** A checkpoint opened with the log's verifier key, of the log's origin (the key's name); anything else is not this log's. */
export function openCheckpoint(note: string, vkey: NoteVerifierKey, where: string): Checkpoint {
  let checkpoint: Checkpoint;
  try {
    checkpoint = parseCheckpoint(openNoteWith(note, vkey));
  } catch (error) {
    throw new LogInconsistentError(`${where} is not a checkpoint signed by ${vkey.name}: ${(error as Error).message}`);
  }
  if (checkpoint.origin !== vkey.name) throw new LogInconsistentError(`${where} is a checkpoint of "${checkpoint.origin}", not "${vkey.name}"`);
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
  await mkdir(keysDir, { recursive: true, mode: 0o700 });
  const file = join(keysDir, LOG_KEY_FILE);
  const fh = await open(file, 'wx', 0o600).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'EEXIST') throw new ConfigError(`${file} exists: a log keeps its key (its checkpoints are verified with it); remove the file only to start a new log`);
    throw error;
  });
  try {
    await fh.writeFile(`${text}\n`);
  } finally {
    await fh.close();
  }
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
