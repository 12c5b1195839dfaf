import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdir, open } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeBase64, encodeBase64 } from '#shared';
import { ConfigError, InvalidKeyError } from '../errors/errors.ts';

/** PKCS#8 DER of an Ed25519 private key (RFC 8410) is this prefix, then the 32-byte seed. */
export const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** A new random Ed25519 seed (32 bytes). */
export function newEd25519Seed(): Uint8Array {
  return generateKeyPairSync('ed25519').privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(ED25519_PKCS8_PREFIX.length);
}

/** The node:crypto private key of an Ed25519 seed, and its raw 32-byte public key. */
export function ed25519FromSeed(seed: Uint8Array): { privateKey: KeyObject; publicKey: Uint8Array } {
  const privateKey = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const publicKey = new Uint8Array(Buffer.from(createPublicKey(privateKey).export({ format: 'jwk' }).x!, 'base64url'));
  return { privateKey, publicKey };
}

/**
 * A signed-note private key's text, `PRIVATE+KEY+<name>+<key ID>+<base64(type || seed)>`: the form
 * Go's golang.org/x/mod/sumdb/note reads. The log key is of type 0x01, a witness key of 0x04.
 */
export function formatNotePrivateKey(name: string, id: number, type: number, seed: Uint8Array): string {
  return `PRIVATE+KEY+${name}+${id.toString(16).padStart(8, '0')}+${encodeBase64(Uint8Array.of(type, ...seed))}`;
}

/**
 * The name and seed of a note private key of `type`; `idOf` gives the key ID its name and seed must
 * have. Anything else is INVALID_KEY naming `where` and what was expected (`what`).
 */
export function parseNotePrivateKey(
  text: string,
  where: string,
  type: number,
  what: string,
  idOf: (name: string, seed: Uint8Array) => number,
): { name: string; seed: Uint8Array } {
  const m = /^PRIVATE\+KEY\+([^+\s]+)\+([0-9a-f]{8})\+(\S+)$/.exec(text.trim());
  const material = m ? decodeBase64(m[3]!) : null;
  if (!m || !material || material.length !== 33 || material[0] !== type) throw new InvalidKeyError(`${where} is not ${what}`);
  const name = m[1]!;
  const seed = material.subarray(1);
  if (idOf(name, seed) !== Number.parseInt(m[2]!, 16))
    throw new InvalidKeyError(`${where}: key ID ${m[2]} does not match the key's name and public key`);
  return { name, seed };
}

/** Writes a new key file (0600) under the keys folder; never replaces one (`exists` says why). */
export async function writeNewKeyFile(keysDir: string, fileName: string, text: string, exists: string): Promise<string> {
  await mkdir(keysDir, { recursive: true, mode: 0o700 });
  const file = join(keysDir, fileName);
  const fh = await open(file, 'wx', 0o600).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'EEXIST') throw new ConfigError(`${file} exists: ${exists}`);
    throw error;
  });
  try {
    await fh.writeFile(`${text}\n`);
  } finally {
    await fh.close();
  }
  return file;
}
