import { decodeBase64url } from './base64url.ts';
import { publicKeyProblem } from './ed25519-encoding.ts';
import { InvalidKeySetError } from './errors.ts';

/** The public half of an Ed25519 key as published: RFC 8037 OKP JWK. */
export interface PublicJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  use: 'sig';
  alg: 'EdDSA';
}

/** A key a key set lists that a verifier does not trust (`trustedKeySet`), and why. */
export interface UntrustedKey {
  kid: string;
  reason: string;
}

/** The JWK Set served at `/.well-known/merchant-verify-keys.json`. */
export interface KeySet {
  keys: PublicJwk[];
  /**
   * Keys the set lists that its reader's trust left out (only on what `trustedKeySet` returns): a
   * signature by one is KEY_NOT_TRUSTED, not UNKNOWN_KEY, since the key is listed, just not trusted.
   */
  untrusted?: readonly UntrustedKey[];
}

/**
 * Key sets `trustedKeySet` made: only theirs carry `untrusted` through {@link parseKeySet}. A key set
 * read from elsewhere cannot name keys as untrusted: its `untrusted` member, if any, is ignored, so a
 * publisher never words the verifier's failures.
 */
const restricted = new WeakSet<object>();

/** Marks a key set as made by `trustedKeySet`, its `untrusted` list the verifier's own finding. */
export function restrictedKeySet(keys: PublicJwk[], untrusted: readonly UntrustedKey[]): KeySet {
  const keySet: KeySet = untrusted.length === 0 ? { keys } : { keys, untrusted };
  restricted.add(keySet);
  return keySet;
}

/** Well-known path of the key set, with the service's short name `merchant-verify`. */
export const KEY_SET_PATH = '/.well-known/merchant-verify-keys.json';

/**
 * Members that hold secret key material in any JWK type (RFC 7517/7518/8037, and `priv` of the
 * AKP type of post-quantum keys): a key set carrying one was published by mistake, whatever the
 * key's type, and accepting it would teach callers to pass secrets around.
 */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k', 'priv'];

/**
 * Whether a JWK is a key this verifier uses: an Ed25519 public key for signatures. The filter
 * jose's local JWK Set applies: key type and curve, then `alg`, `use` and `key_ops` when present.
 * `alg` is "EdDSA" or the fully-specified "Ed25519" of RFC 9864, both meaning this algorithm.
 */
function isOurKeyType(k: Record<string, unknown>): boolean {
  if (k.kty !== 'OKP' || k.crv !== 'Ed25519') return false;
  if (k.alg !== undefined && k.alg !== 'EdDSA' && k.alg !== 'Ed25519') return false;
  if (k.use !== undefined && k.use !== 'sig') return false;
  if (k.key_ops !== undefined && !(Array.isArray(k.key_ops) && k.key_ops.includes('verify'))) return false;
  return true;
}

/**
 * Parses and checks a key set, keeping the keys this verifier uses (Ed25519 signature keys) and
 * skipping keys of any other type, curve, `alg` or `use`, as jose does: a key set may list a key of
 * a type added after this verifier shipped (say a post-quantum key during a migration), and that
 * must not stop it from verifying what it can.
 *
 * Refused whole (INVALID_KEY_SET): anything but an object with a `keys` array of objects; any key
 * with a private member, of whatever type; and an Ed25519 key that is malformed (an `x` that is not
 * 32 bytes of base64url, a non-canonical encoding or a point of small order, a missing `kid`, a
 * `kid` listed twice), since that is our own type published wrong, not a type we do not know.
 * Plain checks rather than a schema library: this runs in the portable verifier.
 */
export function parseKeySet(value: unknown): KeySet {
  if (typeof value !== 'object' || value === null || !Array.isArray((value as { keys?: unknown }).keys)) {
    throw new InvalidKeySetError('key set must be an object with a "keys" array');
  }
  const keys: PublicJwk[] = [];
  const seen = new Set<string>();
  (value as { keys: unknown[] }).keys.forEach((raw, i) => {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new InvalidKeySetError(`keys[${i}] is not an object`);
    const k = raw as Record<string, unknown>;
    const secret = PRIVATE_MEMBERS.find((member) => member in k);
    if (secret) throw new InvalidKeySetError(`keys[${i}] is a private key (has "${secret}"); a key set holds public keys only`);
    if (!isOurKeyType(k)) return;
    const x = typeof k.x === 'string' ? decodeBase64url(k.x) : null;
    if (x?.length !== 32) throw new InvalidKeySetError(`keys[${i}].x: must be 32 bytes in base64url`);
    const problem = publicKeyProblem(x);
    if (problem) throw new InvalidKeySetError(`keys[${i}].x: ${problem}`);
    if (typeof k.kid !== 'string' || k.kid === '') throw new InvalidKeySetError(`keys[${i}].kid: must be a non-empty string`);
    if (seen.has(k.kid)) throw new InvalidKeySetError(`keys[${i}]: duplicate kid "${k.kid}"`);
    seen.add(k.kid);
    keys.push({ kty: 'OKP', crv: 'Ed25519', x: k.x as string, kid: k.kid, use: 'sig', alg: 'EdDSA' });
  });
  const untrusted = restricted.has(value) ? (value as KeySet).untrusted : undefined;
  return untrusted ? restrictedKeySet(keys, untrusted) : { keys };
}

/** The key with this `kid`, or undefined. */
export function findKey(keySet: KeySet, kid: string): PublicJwk | undefined {
  return keySet.keys.find((k) => k.kid === kid);
}
