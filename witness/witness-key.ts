import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { mkdir, open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError, InvalidKeyError } from '../core/errors.ts';
import { decodeBase64, encodeBase64 } from '@merchant-verify/verifier/tlog';
import { cosignatureKeyId, cosignatureLine, cosignedMessage } from '@merchant-verify/verifier/tlog';
import { COSIGNATURE_ED25519, formatVerifierKey, isKeyName } from '@merchant-verify/verifier/tlog';
import { sha256 } from '../core/hash.ts';

/** The witness key's file under the keys folder (mode 0600). */
export const WITNESS_KEY_FILE = 'witness.key';

/**
 * A witness's Ed25519 cosigning key, kept as the log key is: a signed-note private key,
 * `PRIVATE+KEY+<name>+<key ID>+<base64(0x04 || seed)>`, with the cosignature signature type
 * (0x04) and key ID, so its verifier key is the one a tlog-policy `witness` line takes.
 */
export interface WitnessKey {
  name: string;
  id: number;
  privateKey: KeyObject;
  publicKey: Uint8Array;
  /** The verifier key in note form (type 0x04), for the `witness` lines of policies. */
  vkey: string;
}

/** PKCS#8 DER of an Ed25519 private key is this prefix, then the 32-byte seed. */
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** A witness's key name: `<domain>/witness`, a schema-less URL naming the cosigner. */
export const witnessName = (domain: string) => `${domain}/witness`;

export function generateWitnessKeyText(name: string): string {
  if (!isKeyName(name)) throw new ConfigError(`"${name}" cannot be a witness key name (no spaces or "+")`);
  const seed = generateKeyPairSync('ed25519').privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(PKCS8_PREFIX.length);
  const key = fromSeed(name, seed);
  return `PRIVATE+KEY+${name}+${key.id.toString(16).padStart(8, '0')}+${encodeBase64(Uint8Array.of(COSIGNATURE_ED25519, ...seed))}`;
}

export function parseWitnessKey(text: string, where: string): WitnessKey {
  const m = /^PRIVATE\+KEY\+([^+\s]+)\+([0-9a-f]{8})\+(\S+)$/.exec(text.trim());
  const material = m ? decodeBase64(m[3]!) : null;
  if (!m || !material || material.length !== 33 || material[0] !== COSIGNATURE_ED25519) {
    throw new InvalidKeyError(`${where} is not a witness key (PRIVATE+KEY+<name>+<key ID>+<0x04 and an Ed25519 seed>; make one with "mvr keygen --witness")`);
  }
  const key = fromSeed(m[1]!, material.subarray(1));
  if (key.id !== Number.parseInt(m[2]!, 16)) throw new InvalidKeyError(`${where}: key ID ${m[2]} does not match the key's name and public key`);
  return key;
}

function fromSeed(name: string, seed: Uint8Array): WitnessKey {
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const publicKey = new Uint8Array(Buffer.from(createPublicKey(privateKey).export({ format: 'jwk' }).x!, 'base64url'));
  const id = cosignatureKeyId(sha256, name, publicKey);
  return { name, id, privateKey, publicKey, vkey: formatVerifierKey({ name, id, publicKey }, COSIGNATURE_ED25519) };
}

/** The cosignature line of a checkpoint's note text at `time` (POSIX seconds). */
export function cosign(key: WitnessKey, checkpointText: string, time: number): string {
  return cosignatureLine(key, time, sign(null, cosignedMessage(checkpointText, time), key.privateKey));
}

/** Creates the witness key (0600) under the keys folder; refuses to replace one (policies name its key). */
export async function createWitnessKey(keysDir: string, name: string): Promise<{ key: WitnessKey; file: string }> {
  const text = generateWitnessKeyText(name);
  await mkdir(keysDir, { recursive: true, mode: 0o700 });
  const file = join(keysDir, WITNESS_KEY_FILE);
  const fh = await open(file, 'wx', 0o600).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'EEXIST') throw new ConfigError(`${file} exists: a witness keeps its key (the policies that name it verify with it)`);
    throw error;
  });
  try {
    await fh.writeFile(`${text}\n`);
  } finally {
    await fh.close();
  }
  return { key: parseWitnessKey(text, file), file };
}

/** The witness key: `MVR_WITNESS_KEY` (a secret) wins over keys/witness.key; a ConfigError when neither is there. */
export async function loadWitnessKey(keysDir: string, envKey: string | undefined): Promise<WitnessKey> {
  if (envKey && envKey.trim() !== '') return parseWitnessKey(envKey, 'MVR_WITNESS_KEY');
  const file = join(keysDir, WITNESS_KEY_FILE);
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') throw new ConfigError(`no witness key: ${file} does not exist and MVR_WITNESS_KEY is not set (make one with "mvr keygen --witness")`);
    throw error;
  });
  return parseWitnessKey(text, file);
}
