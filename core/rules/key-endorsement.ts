import type { KeyEndorsement, KeySet, PublicJwk } from '@merchant-verify/verifier';
import { KEY_ENDORSEMENT_TYPE } from '#shared';
import { type SigningKey, signRecordChecked } from '../crypto/signing.ts';

/** A key set as published: its keys, and the endorsements that make a new key trusted by those who trust an older one. */
export type PublishedKeySet = KeySet & { endorsements?: KeyEndorsement[] };

/**
 * `key` endorsed by `by`: signed by the record scheme, so a verifier checks it with the code that
 * checks records. What makes a rotated key trusted by a gateway or a verifier that pinned an older
 * key (the verifier package's `trustedKeySet`).
 */
export function endorseKey(key: PublicJwk, by: SigningKey, issuedAt: string): KeyEndorsement {
  const unsigned = { type: KEY_ENDORSEMENT_TYPE, key, issued_at: issuedAt };
  return signRecordChecked(unsigned, by).record as KeyEndorsement;
}

/** `keys` with the endorsements of `lists`, each once, in a fixed order (a build's key set is reproducible); no member when there are none. */
export function withEndorsements(keys: KeySet, lists: readonly KeyEndorsement[][]): PublishedKeySet {
  const bySignature = new Map<string, KeyEndorsement>();
  for (const e of lists.flat()) bySignature.set(e.signature, e);
  const endorsements = [...bySignature.values()].sort((a, b) => (a.signature < b.signature ? -1 : a.signature > b.signature ? 1 : 0));
  return endorsements.length > 0 ? { keys: keys.keys, endorsements } : { keys: keys.keys };
}
