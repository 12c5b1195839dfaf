import { type KeyEndorsement, type KeySet, parseKeySet, type UntrustedKey } from '@merchant-verify/verifier';
import { createTrustedKeySet, keySetEndorsements, TRUST_LIMITS } from '#shared';
import { nodeEd25519Verify } from '../crypto/ed25519.ts';
import { sha256 } from '../crypto/hash.ts';

/** What a gateway (or any reader of the records) trusts, set once at start-up. */
export interface TrustSettings {
  /**
   * The pinned keys (a JWK Set; pinned keys are trusted as they are, and the endorsements it
   * carries fix each endorsing key's one successor, see `trustedKeySet`). Unset: the first key set read that lists a key is pinned, as it was read (a records
   * folder only: a bucket or an origin is refused without it, see `service/store-trust.ts`).
   */
  trustedKeys?: KeySet;
  /** Serve builds and records that carry no signature at all (a deployment that signs nothing). Off unless set. */
  unsigned?: boolean;
}

/** The keys a build and its records are checked against, and what the check lets through. */
export interface CheckKeys {
  /** The keys of the store's key set that are trusted (pinned, or endorsed through pinned keys). */
  keySet: KeySet;
  /** Whether a statement or record without a signature passes (only when the operator said so). */
  unsigned: boolean;
  /** The store's keys left out, and why (for the reason a build is refused). */
  untrusted: readonly UntrustedKey[];
}

/** The verifier package's `trustedKeySet` on the service's one Ed25519 check (core/crypto/ed25519.ts). */
const trustedKeySet = createTrustedKeySet(nodeEd25519Verify);

/**
 * The trust of one gateway: which keys of a key set read from its store it checks signatures with.
 * A key the store's key set names is used only when pinned or endorsed by a trusted key, so whoever
 * can write the store but holds no signing key cannot add one. Unsigned builds pass only with the
 * explicit setting, never because a key set lists no usable key.
 *
 * The answer for the last key set is kept by the SHA-256 of its bytes: a key set read again
 * unchanged (every poll, every build of one rotation) costs a hash and no signature check. Each
 * succession it accepts (a key endorsing its successor) is remembered with the pinned keys, as a
 * TUF client keeps the newest root it verified: a key seen retired stays retired for this process,
 * even if a later key set drops that endorsement and shows another by the same key.
 */
export class KeyTrust {
  private pinned: (KeySet & { endorsements?: KeyEndorsement[] }) | null;
  private last: { hash: string; keys: CheckKeys } | null = null;
  /** Endorsement signatures checked so far (tests count them: an unchanged key set adds none). */
  signatureChecks = 0;
  readonly unsigned: boolean;

  constructor(
    settings: TrustSettings = {},
    /** Told once when the keys were pinned from the first key set read (no `trustedKeys`). */
    private readonly onPinned?: (kids: string[]) => void,
  ) {
    this.pinned = settings.trustedKeys ?? null;
    this.unsigned = settings.unsigned ?? false;
  }

  /** The keys of a key set as read (its bytes, JSON) to check with; INVALID_KEY_SET when it is not one. */
  check(bytes: Uint8Array): CheckKeys {
    const hash = Buffer.from(sha256(bytes)).toString('hex');
    if (this.last?.hash === hash) return this.last.keys;
    const raw: unknown = JSON.parse(new TextDecoder().decode(bytes));
    if (this.pinned === null) {
      const listed = parseKeySet(raw);
      if (listed.keys.length === 0) return { keySet: listed, unsigned: this.unsigned, untrusted: [] };
      // As read, with the successions it shows: what the first key set says is the operator's word here.
      this.pinned = { keys: listed.keys, endorsements: keySetEndorsements(raw) as KeyEndorsement[] };
      this.onPinned?.(listed.keys.map((k) => k.kid));
    }
    const { keySet, untrusted, successions, signatureChecks } = trustedKeySet(raw, this.pinned);
    this.signatureChecks += signatureChecks;
    const known = new Set((this.pinned.endorsements ?? []).map((e) => e.signature));
    const learned = successions.filter((e) => !known.has(e.signature));
    const endorsements = [...(this.pinned.endorsements ?? []), ...learned];
    // Kept within the bound a pinned set is read with too; past it (over 64 rotations in one run) the newest are not kept.
    if (learned.length > 0 && endorsements.length <= TRUST_LIMITS.endorsements) this.pinned = { ...this.pinned, endorsements };
    const keys = { keySet, unsigned: this.unsigned, untrusted };
    this.last = { hash, keys };
    return keys;
  }
}
