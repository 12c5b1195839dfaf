import { InvalidArgumentError } from '../errors.ts';
import type { Sha256 } from './merkle.ts';
import { COSIGNATURE_ED25519, noteKeyId, signatureLine } from './note.ts';

/**
 * Ed25519 cosignatures, `cosignature/v1` (c2sp.org/tlog-cosignature): a note signature line by
 * the witness's key whose bytes after the key ID are a u64 big-endian POSIX timestamp and an
 * Ed25519 signature of `cosignature/v1\ntime <timestamp>\n` followed by the checkpoint's text.
 */

/** Bytes after the key ID: the 8-byte timestamp and the 64-byte signature. */
export const COSIGNATURE_SIZE = 72;
/** Timestamps are at most 2^63 - 1. */
const MAX_TIMESTAMP = (1n << 63n) - 1n;
const encoder = new TextEncoder();

/** The key ID of an Ed25519 cosigner: SHA-256(name || "\n" || 0x04 || public key)[:4]. */
export function cosignatureKeyId(sha256: Sha256, name: string, publicKey: Uint8Array): number {
  return noteKeyId(sha256, name, publicKey, COSIGNATURE_ED25519);
}

/** The message a witness signs: the header line, the time line, then the checkpoint's note text (ending in a newline). */
export function cosignedMessage(checkpointText: string, time: number | bigint): Uint8Array {
  return encoder.encode(`cosignature/v1\ntime ${time}\n${checkpointText}`);
}

/** The signature line of a cosignature made at `time` (seconds) by the key named, given its Ed25519 signature of {@link cosignedMessage}. */
export function cosignatureLine(key: { name: string; id: number }, time: number, signature: Uint8Array): string {
  if (!Number.isSafeInteger(time) || time <= 0)
    throw new InvalidArgumentError('time', `a cosignature time is whole seconds after 1970, not ${time}`);
  const blob = new Uint8Array(COSIGNATURE_SIZE);
  new DataView(blob.buffer).setBigUint64(0, BigInt(time));
  blob.set(signature, 8);
  return signatureLine(key, blob);
}

/** A cosignature's timestamp and Ed25519 signature (the bytes after the key ID); null when it is not 72 bytes or its time exceeds 2^63 - 1. */
export function parseCosignature(bytes: Uint8Array): { time: bigint; signature: Uint8Array } | null {
  if (bytes.length !== COSIGNATURE_SIZE) return null;
  const time = new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0);
  if (time > MAX_TIMESTAMP) return null;
  return { time, signature: bytes.slice(8) };
}
