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
import { createRecordVerifier, type Ed25519Verify } from './verify.ts';

export type { UntrustedKey } from './keyset.ts';

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
  /**
   * When it was endorsed (RFC 3339, UTC). Told, not checked: a date is the signer's word, so what
   * retires a key is its endorsement of a successor (see `trustedKeySet`), never a date.
   */
  issued_at: string;
  key_id: string;
  signature: string;
}

/**
 * How much trust work one key set may ask for. A key set's endorsements past `endorsements` refuse
 * it whole (INVALID_KEY_SET) before any signature is checked, so each endorsement costs at most
 * one check: a key set costs at most that many, however it is built. A key more than `chainLinks`
 * endorsements from a pinned key is not trusted. A rotation adds one endorsement and one link: a
 * key rotated every month reaches the chain's bound after five years; pinning the key set of the
 * day (its keys, its endorsements) starts the count again.
 */
export const TRUST_LIMITS = { endorsements: 128, chainLinks: 64 } as const;

/** The keys of a key set a verifier may check signatures with, and those it may not. */
export interface TrustedKeys {
  /**
   * The key set's keys that are pinned or endorsed through pinned keys (the same keys, the same
   * order), and the others as `untrusted`: a signature by one of those is KEY_NOT_TRUSTED.
   */
  keySet: KeySet;
  untrusted: UntrustedKey[];
  /** The endorsements that made a key trusted: each names the one successor of its signer (pin them to hold it to that). */
  successions: KeyEndorsement[];
  /** How many endorsement signatures were checked (at most `TRUST_LIMITS.endorsements`). */
  signatureChecks: number;
}

/**
 * The endorsements a key set carries (its `endorsements` member; none when absent). Refused
 * (INVALID_KEY_SET) when the member is there but is not an array of objects, or lists more than
 * `TRUST_LIMITS.endorsements`; an entry that is not a valid endorsement is not refused here: it
 * endorses nothing.
 */
export function keySetEndorsements(keySet: unknown): unknown[] {
  const list = (keySet as { endorsements?: unknown } | null)?.endorsements;
  if (list === undefined) return [];
  if (!Array.isArray(list) || list.some((e) => typeof e !== 'object' || e === null || Array.isArray(e)))
    throw new InvalidKeySetError('"endorsements" must be an array of objects');
  if (list.length > TRUST_LIMITS.endorsements)
    throw new InvalidKeySetError(
      `"endorsements" lists ${list.length}, more than the ${TRUST_LIMITS.endorsements} a key set may carry (one a rotation; re-pin a newer key)`,
    );
  return list;
}

/**
 * The keys of `keySet` trusted from `pinned`: a key is trusted when a pinned key has its `kid` and
 * `x`, or when an endorsement in the key set, signed by a trusted key, names its `kid` and `x`.
 * Chains are followed (k1 endorses k2 endorses k3: pinned to k1, all three are trusted) whether
 * or not the key set still lists the keys between, in any order of the endorsements, up to
 * `TRUST_LIMITS.chainLinks` links. A key set with more than `TRUST_LIMITS.endorsements`
 * endorsements is refused (INVALID_KEY_SET) before any is checked.
 *
 * A key endorses one key, its successor, once: that endorsement retires it, and it endorses
 * nothing after, whatever date a later endorsement claims (TUF's root rotation: a root signs the
 * next version, never a second one). A pinned key set's own endorsements fix the successors they
 * name, so an endorsement by the same key of any other key is ignored; where nothing fixes a
 * key's successor and the key set shows it endorsing two keys, it endorses neither (a retired key
 * is being used, and which endorsement came first cannot be told). A key listed under a trusted
 * `kid` with another `x` is not trusted. Both arguments are parsed as key sets first
 * (INVALID_KEY_SET when either is not one).
 *
 * @example
 *   const pinned = JSON.parse(readFileSync('trusted-keys.json', 'utf8'));
 *   const { keySet } = trustedKeySet(await (await fetch(keySetUrl)).json(), pinned);
 *   verifyRecord(record, keySet); // a listed key nobody trusted endorsed is KEY_NOT_TRUSTED
 */
export const trustedKeySet: (keySet: unknown, pinned: unknown) => TrustedKeys = createTrustedKeySet(nobleEd25519Verify);

/**
 * `trustedKeySet` with the Ed25519 verification given (decision 0027's rules run before it either
 * way): the service passes its node:crypto one, for which a key set's worst case of checks is a
 * few milliseconds rather than the pure-JavaScript one's hundred or more.
 */
export function createTrustedKeySet(ed25519Verify: Ed25519Verify): (keySet: unknown, pinned: unknown) => TrustedKeys {
  const verifySignature = createRecordVerifier(ed25519Verify);
  return (keySet, pinned) => {
    const listed = parseKeySet(keySet);
    const roots = parseKeySet(pinned).keys;
    const counter = { checks: 0 };
    // The pinned set's own endorsements say which successor each of its keys was given, once and for all.
    const fixed = walk(roots, keySetEndorsements(pinned), new Map(), counter, verifySignature).successors;
    const { trusted, refused, accepted } = walk(roots, keySetEndorsements(keySet), fixed, counter, verifySignature);
    const keys: PublicJwk[] = [];
    const untrusted: UntrustedKey[] = [];
    for (const k of listed.keys) {
      const x = trusted.get(k.kid);
      if (x === k.x) keys.push(k);
      else
        untrusted.push({
          kid: k.kid,
          reason:
            x !== undefined
              ? 'listed with another public key than the trusted one'
              : (refused.get(k.kid) ?? 'neither pinned nor endorsed by a trusted key'),
        });
    }
    return { keySet: restrictedKeySet(keys, untrusted), untrusted, successions: accepted, signatureChecks: counter.checks };
  };
}

type RecordVerifier = ReturnType<typeof createRecordVerifier>;

/** A successor as an endorsement names it. */
interface Successor {
  kid: string;
  x: string;
}

/**
 * The keys trusted from `roots` through `entries`, breadth first: each signer's endorsements are
 * looked at once, when it becomes trusted, so each entry's signature is checked at most once.
 */
function walk(
  roots: PublicJwk[],
  entries: unknown[],
  fixed: Map<string, Successor>,
  counter: { checks: number },
  verifySignature: RecordVerifier,
) {
  const bySigner = new Map<string, Partial<KeyEndorsement>[]>();
  for (const entry of entries) {
    const e = entry as Partial<KeyEndorsement>;
    if (e.type !== KEY_ENDORSEMENT_TYPE || typeof e.key_id !== 'string') continue;
    bySigner.set(e.key_id, [...(bySigner.get(e.key_id) ?? []), e]);
  }
  const trusted = new Map<string, string>(roots.map((k) => [k.kid, k.x]));
  const successors = new Map<string, Successor>();
  const refused = new Map<string, string>();
  const accepted: KeyEndorsement[] = [];
  let layer = roots.map((k) => k.kid);
  for (let links = 1; layer.length > 0; links++) {
    const next: string[] = [];
    for (const signer of layer) {
      const valid = (bySigner.get(signer) ?? []).flatMap((e) => {
        const key = endorsedKey(e, signer, trusted.get(signer) as string, fixed.get(signer), counter, verifySignature);
        return key ? [{ key, e: e as KeyEndorsement }] : [];
      });
      const named = new Map(valid.map((v) => [`${v.key.kid} ${v.key.x}`, v]));
      if (named.size > 1) {
        for (const { key } of named.values())
          refused.set(key.kid, `endorsed by ${signer} beside another key: a key endorses one successor, so neither is trusted`);
        continue;
      }
      const only = [...named.values()][0];
      if (!only) continue;
      successors.set(signer, { kid: only.key.kid, x: only.key.x });
      if (trusted.has(only.key.kid)) continue;
      if (links > TRUST_LIMITS.chainLinks) {
        refused.set(only.key.kid, `more than ${TRUST_LIMITS.chainLinks} endorsements from a pinned key`);
        continue;
      }
      trusted.set(only.key.kid, only.key.x);
      accepted.push(only.e);
      next.push(only.key.kid);
    }
    layer = next;
  }
  return { trusted, successors, refused, accepted };
}

/**
 * The key an endorsement by `signer` (public key `x`) names, when its signature holds and it is
 * the signer's fixed successor if it has one (another is not checked at all); else null.
 */
function endorsedKey(
  e: Partial<KeyEndorsement>,
  signer: string,
  x: string,
  successor: Successor | undefined,
  counter: { checks: number },
  verifySignature: RecordVerifier,
): PublicJwk | null {
  let key: PublicJwk | undefined;
  try {
    key = parseKeySet({ keys: [e.key] }).keys[0];
  } catch {
    return null;
  }
  if (!key || (successor && (successor.kid !== key.kid || successor.x !== key.x))) return null;
  const signerKey: PublicJwk = { kty: 'OKP', crv: 'Ed25519', x, kid: signer, use: 'sig', alg: 'EdDSA' };
  counter.checks++;
  return verifySignature(e, { keys: [signerKey] }).valid ? key : null;
}
