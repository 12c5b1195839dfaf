/**
 * Keys a verifier trusts: the ones it was given (pinned), and each key one of them endorsed, link
 * by link. A key set fetched from an issuer, a bucket or an origin says which keys are published;
 * it cannot make a key trusted by naming it, since whoever can write the key set could then sign
 * anything. A new key is trusted only when a trusted key signed it (TUF's rule for a root key
 * rotation): the issuer's `mvr keygen` signs the new public key with the key that was active, and
 * the key set carries those endorsements in its `endorsements` member (RFC 7517 lets a JWK Set
 * carry members a reader does not know; a reader that does not know this one ignores it).
 */

import { nobleEd25519Verify } from './ed25519.ts';
import { InvalidKeySetError } from './errors.ts';
import { type KeySet, type PublicJwk, parseKeySet, restrictedKeySet, type UntrustedKey } from './keyset.ts';

export type { UntrustedKey } from './keyset.ts';

import { createRecordVerifier } from './verify.ts';

/** What an endorsement's `type` says: nothing else signed by the record scheme carries it. */
export const KEY_ENDORSEMENT_TYPE = 'merchant-verify-key-endorsement/v1';

/**
 * A key endorsed by another: signed by the record scheme (Ed25519 over the RFC 8785 bytes of the
 * object less `key_id` and `signature`), `key_id` naming the endorsing key.
 */
export interface KeyEndorsement {
  type: typeof KEY_ENDORSEMENT_TYPE;
  /** The endorsed public key, as the key set lists it. */
  key: PublicJwk;
  /** When it was endorsed (RFC 3339, UTC). Told, not checked: an endorsement does not expire. */
  issued_at: string;
  key_id: string;
  signature: string;
}

/** The keys of a key set a verifier may check signatures with, and those it may not. */
export interface TrustedKeys {
  /**
   * The key set's keys that are pinned or endorsed through pinned keys (the same keys, the same
   * order), and the others as `untrusted`: a signature by one of those is KEY_NOT_TRUSTED.
   */
  keySet: KeySet;
  untrusted: UntrustedKey[];
}

const verifySignature = createRecordVerifier(nobleEd25519Verify);

/**
 * The endorsements a key set carries (its `endorsements` member; none when absent). Refused
 * (INVALID_KEY_SET) when the member is there but is not an array of objects; an entry that is not
 * a valid endorsement is not refused here: it endorses nothing.
 */
export function keySetEndorsements(keySet: unknown): unknown[] {
  const list = (keySet as { endorsements?: unknown } | null)?.endorsements;
  if (list === undefined) return [];
  if (!Array.isArray(list) || list.some((e) => typeof e !== 'object' || e === null || Array.isArray(e)))
    throw new InvalidKeySetError('"endorsements" must be an array of objects');
  return list;
}

/**
 * The keys of `keySet` trusted from `pinned`: a key is trusted when a pinned key has its `kid` and
 * `x`, or when an endorsement in the key set, signed by a trusted key, names its `kid` and `x`.
 * Chains are followed (k1 endorses k2 endorses k3: pinned to k1, all three are trusted) whether
 * or not the key set still lists the keys between; the order of the endorsements does not matter.
 * A key the key set lists under a trusted `kid` with another `x` is not trusted. Both arguments
 * are parsed as key sets first (INVALID_KEY_SET when either is not one).
 *
 * @example
 *   const pinned = JSON.parse(readFileSync('trusted-keys.json', 'utf8'));
 *   const { keySet } = trustedKeySet(await (await fetch(keySetUrl)).json(), pinned);
 *   verifyRecord(record, keySet); // a listed key nobody trusted endorsed is KEY_NOT_TRUSTED, an unlisted one UNKNOWN_KEY
 */
export function trustedKeySet(keySet: unknown, pinned: unknown): TrustedKeys {
  const listed = parseKeySet(keySet);
  const trusted = new Map<string, string>(parseKeySet(pinned).keys.map((k) => [k.kid, k.x]));
  let pending = keySetEndorsements(keySet);
  // Each pass trusts the keys endorsed by keys trusted so far; it ends when a pass adds none.
  for (let added = true; added && pending.length > 0; ) {
    added = false;
    pending = pending.filter((entry) => {
      const key = endorsedKey(entry, trusted);
      if (key === null) return true;
      if (!trusted.has(key.kid)) {
        trusted.set(key.kid, key.x);
        added = true;
      }
      return false;
    });
  }
  const keys: PublicJwk[] = [];
  const untrusted: UntrustedKey[] = [];
  for (const k of listed.keys) {
    const x = trusted.get(k.kid);
    if (x === k.x) keys.push(k);
    else
      untrusted.push({
        kid: k.kid,
        reason: x === undefined ? 'neither pinned nor endorsed by a trusted key' : 'listed with another public key than the trusted one',
      });
  }
  return { keySet: restrictedKeySet(keys, untrusted), untrusted };
}

/** The key an endorsement names, when it is one and a key in `trusted` signed it; else null. */
function endorsedKey(entry: unknown, trusted: Map<string, string>): PublicJwk | null {
  const e = entry as Partial<KeyEndorsement>;
  if (e.type !== KEY_ENDORSEMENT_TYPE || typeof e.key_id !== 'string') return null;
  const signer = trusted.get(e.key_id);
  if (signer === undefined) return null;
  let key: PublicJwk | undefined;
  try {
    key = parseKeySet({ keys: [e.key] }).keys[0];
  } catch {
    return null;
  }
  if (!key) return null;
  const signerKey: PublicJwk = { kty: 'OKP', crv: 'Ed25519', x: signer, kid: e.key_id, use: 'sig', alg: 'EdDSA' };
  return verifySignature(entry, { keys: [signerKey] }).valid ? key : null;
}
