import { type KeySet, parseKeySet, trustedKeySet, type UntrustedKey } from '@merchant-verify/verifier';

/** What a gateway (or any reader of the records) trusts, set once at start-up. */
export interface TrustSettings {
  /**
   * The pinned keys (a JWK Set; any endorsements in it are not needed: pinned keys are trusted as
   * they are). Unset: the first key set read that lists a key is pinned, as it was read (a records
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

/**
 * The trust of one gateway: which keys of a key set read from its store it checks signatures with.
 * A key the store's key set names is used only when pinned or endorsed by a trusted key, so whoever
 * can write the store but holds no signing key cannot add one. Unsigned builds pass only with the
 * explicit setting, never because a key set lists no usable key.
 */
export class KeyTrust {
  private pinned: KeySet | null;
  readonly unsigned: boolean;

  constructor(
    settings: TrustSettings = {},
    /** Told once when the keys were pinned from the first key set read (no `trustedKeys`). */
    private readonly onPinned?: (kids: string[]) => void,
  ) {
    this.pinned = settings.trustedKeys ?? null;
    this.unsigned = settings.unsigned ?? false;
  }

  /** The keys of a key set as read (JSON value) to check with; INVALID_KEY_SET when it is not one. */
  check(raw: unknown): CheckKeys {
    if (this.pinned === null) {
      const listed = parseKeySet(raw);
      if (listed.keys.length === 0) return { keySet: listed, unsigned: this.unsigned, untrusted: [] };
      this.pinned = listed;
      this.onPinned?.(listed.keys.map((k) => k.kid));
    }
    const { keySet, untrusted } = trustedKeySet(raw, this.pinned);
    return { keySet, unsigned: this.unsigned, untrusted };
  }
}
