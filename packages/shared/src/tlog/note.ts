import { InvalidVerifierKeyError, NoteError } from '../errors.ts';
import { decodeBase64, encodeBase64 } from './base64.ts';
import type { Sha256 } from './merkle.ts';

/**
 * C2SP signed notes (c2sp.org/signed-note) with Ed25519 keys: a text, a blank line, and lines
 * `— <key name> base64(key ID || signature)`; and verifier keys,
 * `<key name>+<hex key ID>+base64(0x01 || public key)`.
 */

/** Signature type of Ed25519 note signatures. */
const ED25519 = 0x01;
/** Signature types of C2SP cosignatures (c2sp.org/tlog-cosignature): Ed25519 `cosignature/v1`, and ML-DSA-44. */
export const COSIGNATURE_ED25519 = 0x04;
export const COSIGNATURE_ML_DSA_44 = 0x06;
const encoder = new TextEncoder();

export interface NoteVerifierKey {
  name: string;
  /** The 32-bit key ID: SHA-256(name || 0x0A || 0x01 || public key)[:4], big-endian. */
  id: number;
  publicKey: Uint8Array;
}

export interface NoteSignature {
  name: string;
  id: number;
  signature: Uint8Array;
}

export { InvalidVerifierKeyError, NoteError };

/**
 * Most signature lines a note may carry, as Go's note package allows: past it the note is refused
 * before any line is decoded, so a note padded with copies of one valid line costs no more than
 * this many Ed25519 checks.
 */
export const MAX_NOTE_SIGNATURES = 100;

/** The key ID of a key of this name and signature type (Ed25519 note signatures by default): SHA-256(name || 0x0A || type || key)[:4]. */
export function noteKeyId(sha256: Sha256, name: string, publicKey: Uint8Array, type: number = ED25519): number {
  const nameBytes = encoder.encode(name);
  const data = new Uint8Array(nameBytes.length + 2 + publicKey.length);
  data.set(nameBytes);
  data[nameBytes.length] = 0x0a;
  data[nameBytes.length + 1] = type;
  data.set(publicKey, nameBytes.length + 2);
  const h = sha256(data);
  return ((h[0]! << 24) | (h[1]! << 16) | (h[2]! << 8) | h[3]!) >>> 0;
}

/** A key name: non-empty, no Unicode space, no plus. */
export function isKeyName(name: string): boolean {
  return name.length > 0 && !/[\s+\u0000-\u001f]/u.test(name);
}

const hex8 = (id: number) => id.toString(16).padStart(8, '0');

export function formatVerifierKey(key: NoteVerifierKey, type: number = ED25519): string {
  const material = new Uint8Array(33);
  material[0] = type;
  material.set(key.publicKey, 1);
  return `${key.name}+${hex8(key.id)}+${encodeBase64(material)}`;
}

/** A verifier key of any signature type: its name, key ID, type byte and public key material. */
export interface TypedVerifierKey extends NoteVerifierKey {
  type: number;
}

/** Parses a verifier key of any signature type, checking that its key ID is the one its name, type and key give. */
export function parseTypedVerifierKey(sha256: Sha256, text: string): TypedVerifierKey {
  // The key's base64 may hold "+" itself: the name and the ID are the first two parts.
  const parts = /^([^+]*)\+([^+]*)\+(.*)$/s.exec(text.trim());
  if (!parts) throw new InvalidVerifierKeyError('a verifier key is <name>+<key ID>+<key>, three parts separated by "+"');
  const [, name, idHex, keyText] = parts as unknown as [string, string, string, string];
  if (!isKeyName(name)) throw new InvalidVerifierKeyError(`verifier key name "${name}" is empty or has a space`);
  if (!/^[0-9a-f]{8}$/.test(idHex)) throw new InvalidVerifierKeyError(`verifier key ID "${idHex}" is not 8 lowercase hex digits`);
  const material = decodeBase64(keyText);
  if (!material || material.length < 2) throw new InvalidVerifierKeyError('the verifier key is not a signature type and a key, in base64');
  const type = material[0]!;
  const publicKey = material.slice(1);
  const id = Number.parseInt(idHex, 16);
  if (noteKeyId(sha256, name, publicKey, type) !== id)
    throw new InvalidVerifierKeyError(`verifier key ID ${idHex} does not match its name and key`);
  return { name, id, type, publicKey };
}

/** Parses an Ed25519 verifier key, checking that its key ID is the one its name and key give. */
export function parseVerifierKey(sha256: Sha256, text: string): NoteVerifierKey {
  const key = parseTypedVerifierKey(sha256, text);
  if (key.type !== ED25519 || key.publicKey.length !== 32)
    throw new InvalidVerifierKeyError('the verifier key is not an Ed25519 key (type 0x01 and 32 bytes, in base64)');
  return { name: key.name, id: key.id, publicKey: key.publicKey };
}

/** Splits a signed note into its text (ending in a newline) and its signature lines. */
export function parseNote(note: string): { text: string; signatures: NoteSignature[] } {
  // No ASCII control characters but newline (the text is what was signed, byte for byte).
  if (/[\u0000-\u0009\u000b-\u001f]/.test(note)) throw new NoteError('a signed note has a control character');
  const split = note.lastIndexOf('\n\n');
  if (split < 0 || !note.endsWith('\n'))
    throw new NoteError('a signed note is a text, a blank line, then signature lines, each ending in a newline');
  const text = note.slice(0, split + 1);
  const lines = note.slice(split + 2, -1).split('\n');
  if (lines.length > MAX_NOTE_SIGNATURES)
    throw new NoteError(`a signed note has ${lines.length} signature lines, more than the ${MAX_NOTE_SIGNATURES} allowed`);
  const signatures: NoteSignature[] = [];
  for (const line of lines) {
    const m = /^\u2014 (\S+) (\S+)$/u.exec(line);
    const bytes = m ? decodeBase64(m[2]!) : null;
    if (!m || !bytes || bytes.length < 5 || !isKeyName(m[1]!))
      throw new NoteError(`"${line}" is not a signature line (— <key name> <base64>)`);
    signatures.push({
      name: m[1]!,
      id: ((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0,
      signature: bytes.slice(4),
    });
  }
  if (signatures.length === 0) throw new NoteError('a signed note has no signature');
  return { text, signatures };
}

/** The signature line of a note text signed by a key (`sign` makes the Ed25519 signature). */
export function signatureLine(key: { name: string; id: number }, signature: Uint8Array): string {
  const bytes = new Uint8Array(4 + signature.length);
  bytes.set([key.id >>> 24, (key.id >>> 16) & 255, (key.id >>> 8) & 255, key.id & 255]);
  bytes.set(signature, 4);
  return `\u2014 ${key.name} ${encodeBase64(bytes)}\n`;
}

export type Ed25519VerifyRaw = (signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array) => boolean;

/**
 * Opens a signed note with the keys one trusts: signatures by unknown keys (another name or ID)
 * are ignored; a signature by a known key must verify; at least one must. Returns the text.
 */
export function openNote(note: string, keys: NoteVerifierKey[], verify: Ed25519VerifyRaw): string {
  const { text, signatures } = parseNote(note);
  const message = encoder.encode(text);
  let verified = 0;
  for (const s of signatures) {
    const key = keys.find((k) => k.name === s.name && k.id === s.id);
    if (!key) continue;
    if (s.signature.length !== 64 || !verify(s.signature, message, key.publicKey))
      throw new NoteError(`the signature by ${s.name} does not verify`);
    verified++;
  }
  if (verified === 0) throw new NoteError(`not signed by ${keys.map((k) => `${k.name}+${hex8(k.id)}`).join(' or ')}`);
  return text;
}
