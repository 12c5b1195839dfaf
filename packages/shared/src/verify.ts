import { decodeBase64url } from './base64url.ts';
import { canonicalBytes } from './canonical.ts';
import { publicKeyProblem, signatureProblem } from './ed25519-encoding.ts';
import { MvrError, type VerifierErrorCode } from './errors.ts';
import { findKey, type KeySet } from './keyset.ts';
import type { Ed25519VerifyRaw } from './tlog/note.ts';

/** Why a record did not verify. Stable codes; a verifier in another language uses the same. */
export type VerifyFailureCode = Extract<
  VerifierErrorCode,
  | 'UNSIGNED' // no `signature`: unverified, never a pass (the spec: a missing signature is never a pass)
  | 'MALFORMED_RECORD' // not an object, or `key_id`/`signature` half present or not strings
  | 'UNKNOWN_KEY' // `key_id` is not in the key set
  | 'KEY_NOT_TRUSTED' // `key_id` is in the key set, but not among the keys the verifier trusts (`trustedKeySet`)
  | 'MALFORMED_SIGNATURE' // not `ed25519:` + 64 bytes of unpadded base64url, or not as an RFC 8032 signer makes one (R canonical and not of small order, S < L)
  | 'BAD_SIGNATURE' // well-formed, but does not verify over the canonical record
  | 'DOMAIN_MISMATCH' // verifies, but is the record of another domain than the one asked for
>;

export type VerifyResult = { valid: true; keyId: string } | { valid: false; code: VerifyFailureCode; message: string; keyId?: string };

/** An Ed25519 verify primitive: node:crypto on the server, @noble/ed25519 in the portable verifier. */
export type Ed25519Verify = (signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array, kid: string) => boolean;

/** Why a signature over raw bytes did not verify: the key, the signature's encoding, or the equation. */
export type Ed25519Failure = { code: Extract<VerifyFailureCode, 'UNKNOWN_KEY' | 'MALFORMED_SIGNATURE' | 'BAD_SIGNATURE'>; message: string };

/**
 * The Ed25519 step of the record scheme on raw bytes, around a primitive: the shared encoding
 * rules first (./ed25519-encoding.ts), so every primitive refuses what any of them refuses,
 * then the primitive. Null when the signature verifies.
 */
export function createEd25519Check(ed25519Verify: Ed25519Verify) {
  return function checkEd25519(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array, kid: string): Ed25519Failure | null {
    const keyProblem = publicKeyProblem(publicKey);
    if (keyProblem) return { code: 'UNKNOWN_KEY', message: `key "${kid}" is not a usable Ed25519 key: ${keyProblem}` };
    const signatureFault = signatureProblem(signature);
    if (signatureFault)
      return { code: 'MALFORMED_SIGNATURE', message: `signature is not a canonical Ed25519 signature: ${signatureFault}` };
    if (!ed25519Verify(signature, message, publicKey, kid))
      return { code: 'BAD_SIGNATURE', message: 'signature does not match the record' };
    return null;
  };
}

/** The same step for a log's checkpoint signature (a signed note's Ed25519 line): the same encoding rules, the same primitive. */
export function createNoteEd25519(ed25519Verify: Ed25519Verify): Ed25519VerifyRaw {
  const checkEd25519 = createEd25519Check(ed25519Verify);
  return (signature, message, publicKey) => checkEd25519(signature, message, publicKey, 'log key') === null;
}

const SIGNATURE_PREFIX = 'ed25519:';

/**
 * Builds a record verifier around an Ed25519 primitive. The pipeline reads top to bottom and
 * each step returns a coded failure; only a valid signature over the exact canonical bytes of
 * the record (less `key_id` and `signature`) by a key in the set passes.
 */
export function createRecordVerifier(ed25519Verify: Ed25519Verify) {
  const checkEd25519 = createEd25519Check(ed25519Verify);
  return function verifyRecord(record: unknown, keySet: KeySet): VerifyResult {
    // 1. Shape: an object whose signature members are both present or both absent.
    if (typeof record !== 'object' || record === null || Array.isArray(record)) {
      return fail('MALFORMED_RECORD', 'record is not a JSON object');
    }
    const { key_id: keyId, signature, ...unsigned } = record as Record<string, unknown>;
    // Checked by presence, not truthiness: an empty string is a malformed signature, not "unsigned".
    if (!('signature' in record)) {
      return 'key_id' in record
        ? fail('MALFORMED_RECORD', 'record has key_id but no signature')
        : fail('UNSIGNED', 'record carries no signature');
    }
    if (typeof keyId !== 'string' || keyId === '') return fail('MALFORMED_RECORD', 'record has a signature but no key_id');
    if (typeof signature !== 'string') return fail('MALFORMED_SIGNATURE', 'signature is not a string', keyId);

    // 2. Key: the key_id must name a key in the set; an unknown id is never "try them all".
    const key = findKey(keySet, keyId);
    if (!key) return unusableKey(keySet, keyId);
    const publicKey = decodeBase64url(key.x);
    if (publicKey?.length !== 32) return fail('UNKNOWN_KEY', `key "${keyId}" has a malformed x`, keyId);

    // 3. Signature text: the prefix, then exactly 64 bytes of unpadded base64url.
    if (!signature.startsWith(SIGNATURE_PREFIX)) {
      return fail('MALFORMED_SIGNATURE', `signature does not start with "${SIGNATURE_PREFIX}"`, keyId);
    }
    const sig = decodeBase64url(signature.slice(SIGNATURE_PREFIX.length));
    if (sig?.length !== 64) return fail('MALFORMED_SIGNATURE', 'signature is not 64 bytes of base64url', keyId);

    // 4. Bytes: the canonical JSON of everything else, exactly as the issuer signed it.
    let message: Uint8Array;
    try {
      message = canonicalBytes(unsigned);
    } catch (error) {
      return fail('MALFORMED_RECORD', error instanceof MvrError ? error.message : 'record is not canonicalizable', keyId);
    }
    // 5. Ed25519: the encoding rules every verifier shares, then the primitive.
    const failure = checkEd25519(sig, message, publicKey, keyId);
    if (failure) return fail(failure.code, failure.message, keyId);
    return { valid: true, keyId };
  };
}

/** A key_id the set lists but its reader does not trust is said apart from one it does not list at all. */
function unusableKey(keySet: KeySet, keyId: string): VerifyResult {
  const untrusted = keySet.untrusted?.find((k) => k.kid === keyId);
  if (!untrusted) return fail('UNKNOWN_KEY', `key_id "${keyId}" is not in the key set`, keyId);
  return fail(
    'KEY_NOT_TRUSTED',
    `signed by key "${keyId}", which is in the key set but not among the keys trusted (${untrusted.reason})`,
    keyId,
  );
}

function fail(code: VerifyFailureCode, message: string, keyId?: string): VerifyResult {
  return keyId === undefined ? { valid: false, code, message } : { valid: false, code, message, keyId };
}

/** Ed25519 signature text for a raw signature: `ed25519:` + unpadded base64url. */
export function signatureText(base64url: string): string {
  return SIGNATURE_PREFIX + base64url;
}
