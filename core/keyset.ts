import { z } from 'zod';
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

/** Well-known path of the key set, fixed by SPEC 4.2 with the short name `merchant-verify`. */
export const KEY_SET_PATH = '/.well-known/merchant-verify-keys.json';

const B64URL_32 = /^[A-Za-z0-9_-]{43}$/;

export const publicJwkSchema = z.object({
  kty: z.literal('OKP'),
  crv: z.literal('Ed25519'),
  x: z.string().regex(B64URL_32, 'x must be 32 bytes in base64url'),
  kid: z.string().min(1),
  use: z.literal('sig').default('sig'),
  alg: z.literal('EdDSA').default('EdDSA'),
});

/**
 * Parses and checks a key set. Refuses private keys outright: a set that carries `d` was
 * published by mistake, and accepting it would teach callers to pass secrets around.
 * Keys of other types are refused too, and duplicate `kid`s, so lookup by `kid` is unambiguous.
 */
export function parseKeySet(value: unknown): KeySet {
  if (typeof value !== 'object' || value === null || !Array.isArray((value as { keys?: unknown }).keys)) {
    throw new InvalidKeySetError('key set must be an object with a "keys" array');
  }
  const keys: PublicJwk[] = [];
  const seen = new Set<string>();
  (value as { keys: unknown[] }).keys.forEach((raw, i) => {
    if (typeof raw === 'object' && raw !== null && 'd' in raw) {
      throw new InvalidKeySetError(`keys[${i}] is a private key (has "d"); a key set holds public keys only`);
    }
    const parsed = publicJwkSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new InvalidKeySetError(`keys[${i}].${issue.path.join('.')}: ${issue.message}`);
    }
    if (seen.has(parsed.data.kid)) throw new InvalidKeySetError(`keys[${i}]: duplicate kid "${parsed.data.kid}"`);
    seen.add(parsed.data.kid);
    keys.push(parsed.data);
  });
  return { keys };
}

/** The key with this `kid`, or undefined. */
export function findKey(keySet: KeySet, kid: string): PublicJwk | undefined {
  return keySet.keys.find((k) => k.kid === kid);
}
