import { type KeyObject, sign } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { COSIGNATURE_ED25519, cosignatureKeyId, cosignatureLine, cosignedMessage, formatVerifierKey, isKeyName } from '#shared';
import { sha256 } from '../../core/crypto/hash.ts';
import {
  ed25519FromSeed,
  formatNotePrivateKey,
  newEd25519Seed,
  parseNotePrivateKey,
  writeNewKeyFile,
} from '../../core/crypto/note-private-key.ts';
import { ConfigError } from '../../core/errors/errors.ts';

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

/** A witness's key name: `<domain>/witness`, a schema-less URL naming the cosigner. */
export const witnessName = (domain: string) => `${domain}/witness`;

export function generateWitnessKeyText(name: string): string {
  if (!isKeyName(name)) throw new ConfigError(`"${name}" cannot be a witness key name (no spaces or "+")`);
  const seed = newEd25519Seed();
  return formatNotePrivateKey(name, fromSeed(name, seed).id, COSIGNATURE_ED25519, seed);
}

export function parseWitnessKey(text: string, where: string): WitnessKey {
  const what = 'a witness key (PRIVATE+KEY+<name>+<key ID>+<0x04 and an Ed25519 seed>; make one with "mvr keygen --witness")';
  const { name, seed } = parseNotePrivateKey(text, where, COSIGNATURE_ED25519, what, (n, s) => fromSeed(n, s).id);
  return fromSeed(name, seed);
}

function fromSeed(name: string, seed: Uint8Array): WitnessKey {
  const { privateKey, publicKey } = ed25519FromSeed(seed);
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
  const file = await writeNewKeyFile(keysDir, WITNESS_KEY_FILE, text, 'a witness keeps its key (the policies that name it verify with it)');
  return { key: parseWitnessKey(text, file), file };
}

/** The witness key: `MVR_WITNESS_KEY` (a secret) wins over keys/witness.key; a ConfigError when neither is there. */
export async function loadWitnessKey(keysDir: string, envKey: string | undefined): Promise<WitnessKey> {
  if (envKey && envKey.trim() !== '') return parseWitnessKey(envKey, 'MVR_WITNESS_KEY');
  const file = join(keysDir, WITNESS_KEY_FILE);
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT')
      throw new ConfigError(`no witness key: ${file} does not exist and MVR_WITNESS_KEY is not set (make one with "mvr keygen --witness")`);
    throw error;
  });
  return parseWitnessKey(text, file);
}
