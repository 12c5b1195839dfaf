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

/** The JWK Set served at `/.well-known/merchant-verify-keys.json`. */
export interface KeySet {
  keys: PublicJwk[];
}

/** Well-known path of the key set, with the service's short name `merchant-verify`. */
export const KEY_SET_PATH = '/.well-known/merchant-verify-keys.json';

const B64URL_32 = /^[A-Za-z0-9_-]{43}$/;

/**
 * Parses and checks a key set. Refuses private keys outright: a set that carries `d` was
 * published by mistake, and accepting it would teach callers to pass secrets around.
 * Keys of other types are refused too, and duplicate `kid`s, so lookup by `kid` is unambiguous.
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
    if ('d' in k) throw new InvalidKeySetError(`keys[${i}] is a private key (has "d"); a key set holds public keys only`);
    if (k.kty !== 'OKP') throw new InvalidKeySetError(`keys[${i}].kty: must be "OKP"`);
    if (k.crv !== 'Ed25519') throw new InvalidKeySetError(`keys[${i}].crv: must be "Ed25519"`);
    if (typeof k.x !== 'string' || !B64URL_32.test(k.x)) throw new InvalidKeySetError(`keys[${i}].x: must be 32 bytes in base64url`);
    if (typeof k.kid !== 'string' || k.kid === '') throw new InvalidKeySetError(`keys[${i}].kid: must be a non-empty string`);
    if (k.use !== undefined && k.use !== 'sig') throw new InvalidKeySetError(`keys[${i}].use: must be "sig"`);
    if (k.alg !== undefined && k.alg !== 'EdDSA') throw new InvalidKeySetError(`keys[${i}].alg: must be "EdDSA"`);
    if (seen.has(k.kid)) throw new InvalidKeySetError(`keys[${i}]: duplicate kid "${k.kid}"`);
    seen.add(k.kid);
    keys.push({ kty: 'OKP', crv: 'Ed25519', x: k.x, kid: k.kid, use: 'sig', alg: 'EdDSA' });
  });
  return { keys };
}

/** The key with this `kid`, or undefined. */
export function findKey(keySet: KeySet, kid: string): PublicJwk | undefined {
  return keySet.keys.find((k) => k.kid === kid);
}
