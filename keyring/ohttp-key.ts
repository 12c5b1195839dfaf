import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeNewKeyFile } from '../core/crypto/note-private-key.ts';
import { InvalidKeyError } from '../core/errors/errors.ts';
import { readRegularFile } from '../core/files.ts';
import { READ_LIMITS } from '../core/limits.ts';
import { type OhttpGatewayKey, ohttpKeyFromSeed, parseKeyConfigs } from '../core/ohttp.ts';

/** The gateway's Oblivious HTTP key under the keys folder (0600): one line, `<key id> <seed as hex>`. */
export const OHTTP_KEY_FILE = 'ohttp.key';

/**
 * Its public key configuration (`application/ohttp-keys`) beside it: what a build reads and signs
 * the hash of, so a build (in CI) never needs the private key, only this file.
 */
export const OHTTP_CONFIG_FILE = 'ohttp-keys.bin';

/**
 * Creates the Oblivious HTTP key (0600) under the keys folder with key id 0, and its public key
 * configuration beside it; refuses to replace a key.
 */
export async function createOhttpKey(keysDir: string): Promise<OhttpGatewayKey> {
  const text = `0 ${randomBytes(32).toString('hex')}`;
  const file = await writeNewKeyFile(
    keysDir,
    OHTTP_KEY_FILE,
    text,
    'clients check the key configuration against the signed build; remove the file only to publish a new one with the next build',
  );
  const key = await parseOhttpKey(text, file);
  await writeFile(join(keysDir, OHTTP_CONFIG_FILE), key.configBytes);
  return key;
}

/** The public key configuration the keys folder holds (keys/ohttp-keys.bin), checked to parse; null when there is none. */
export async function loadOhttpConfig(keysDir: string): Promise<Buffer | null> {
  const file = join(keysDir, OHTTP_CONFIG_FILE);
  const bytes = await readRegularFile(
    file,
    READ_LIMITS.ohttpKeys.bytes,
    () => new InvalidKeyError(`${file} is larger than key configurations are`),
  ).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (bytes === null) return null;
  try {
    parseKeyConfigs(bytes);
  } catch (error) {
    throw new InvalidKeyError(`${file} is not an Oblivious HTTP key configuration: ${(error as Error).message}`);
  }
  return bytes;
}

/** The key a key file (or its text, `where` naming it) holds; INVALID_KEY naming `where` when it is not one. */
export function parseOhttpKey(text: string, where: string): Promise<OhttpGatewayKey> {
  const m = /^(\d{1,3}) ([0-9a-f]{64})\s*$/.exec(text);
  const keyId = m ? Number(m[1]) : -1;
  if (!m || keyId > 255)
    throw new InvalidKeyError(`${where} is not an Oblivious HTTP key: one line, a key id (0-255), a space and 64 hex digits`);
  return ohttpKeyFromSeed(keyId, Buffer.from(m[2]!, 'hex'));
}

/** The Oblivious HTTP key under the keys folder; null when there is none. */
export async function loadOhttpKey(keysDir: string): Promise<OhttpGatewayKey | null> {
  const file = join(keysDir, OHTTP_KEY_FILE);
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  return text === null ? null : parseOhttpKey(text, file);
}
