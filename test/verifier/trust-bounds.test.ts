/**
 * Trust material is bounded (`TRUST_LIMITS`): a key set of more endorsements than the bound is
 * refused before a signature is checked (the 1 MiB key set of bogus endorsements naming the pinned
 * key); within the bound each endorsement costs at most one check; a key too many links from a
 * pinned key is not trusted; the gateway's `KeyTrust` checks an unchanged key set once. And a key
 * endorses one successor: once retired by that endorsement it endorses nothing else, whatever date
 * it writes. The work is counted in signature checks, never timed.
 */
import { type KeyEndorsement, type KeySet, trustedKeySet } from '@merchant-verify/verifier';
import { describe, expect, it } from 'vitest';
import { generatePrivateJwk, loadSigningKey, type SigningKey } from '../../core/crypto/signing.ts';
import { TRUST_LIMITS } from '../../core/limits.ts';
import { endorseKey } from '../../core/rules/key-endorsement.ts';
import { KeyTrust } from '../../core/rules/key-trust.ts';

const AT = '2026-11-01T00:00:00Z';
const newKey = (): SigningKey => loadSigningKey(generatePrivateJwk());
const [k1, k2, x] = [newKey(), newKey(), newKey()];
const pin = (...keys: SigningKey[]): KeySet => ({ keys: keys.map((k) => k.publicJwk) });
const kids = (keySet: unknown, pinned: unknown) => trustedKeySet(keySet, pinned).keySet.keys.map((k) => k.kid);
const bytesOf = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

/** `n` endorsements naming `signer` that look genuine (a well-formed 64-byte signature) and are not. */
const bogus = (signer: SigningKey, n: number): KeyEndorsement[] => {
  const genuine = endorseKey(x.publicJwk, signer, AT);
  return Array.from({ length: n }, (_, i) => ({
    ...genuine,
    issued_at: `2026-11-01T00:00:${String(i % 60).padStart(2, '0')}Z`,
    key: { ...x.publicJwk, kid: `bogus-${i}` },
  }));
};

describe('bounded trust work', () => {
  it('a 1 MiB key set of bogus endorsements naming the pinned key is INVALID_KEY_SET before any signature is checked', () => {
    const keySet = { keys: [k1.publicJwk], endorsements: bogus(k1, 2_798) };
    expect(bytesOf(keySet).length).toBeGreaterThan(900 * 1024);
    expect(() => trustedKeySet(keySet, pin(k1))).toThrow(expect.objectContaining({ code: 'INVALID_KEY_SET' }));
    const trust = new KeyTrust({ trustedKeys: pin(k1) });
    expect(() => trust.check(bytesOf(keySet))).toThrow(expect.objectContaining({ code: 'INVALID_KEY_SET' }));
    expect(trust.signatureChecks).toBe(0);
  });

  it('within the bound, each endorsement is checked at most once, however many links the genuine chain has', () => {
    const chain = [k1, k2, newKey(), newKey()];
    const genuine = chain.slice(1).map((k, i) => endorseKey(k.publicJwk, chain[i]!, AT));
    const endorsements = [...bogus(k1, TRUST_LIMITS.endorsements - genuine.length), ...genuine];
    const result = trustedKeySet({ keys: chain.map((k) => k.publicJwk), endorsements }, pin(k1));
    // k1's endorsements are all looked at (the bogus ones fail), then one a link: never more than the list.
    expect(result.signatureChecks).toBeLessThanOrEqual(TRUST_LIMITS.endorsements);
    expect(result.signatureChecks).toBe(TRUST_LIMITS.endorsements);
    expect(result.keySet.keys.map((k) => k.kid)).toEqual(chain.map((k) => k.kid));
  });

  it(`a key more than ${TRUST_LIMITS.chainLinks} links from a pinned key is not trusted`, () => {
    const chain = Array.from({ length: TRUST_LIMITS.chainLinks + 2 }, newKey);
    const endorsements = chain.slice(1).map((k, i) => endorseKey(k.publicJwk, chain[i]!, AT));
    const [last, beyond] = chain.slice(-2) as [SigningKey, SigningKey];
    const { keySet, untrusted } = trustedKeySet({ keys: [last.publicJwk, beyond.publicJwk], endorsements }, pin(chain[0]!));
    expect(keySet.keys.map((k) => k.kid)).toEqual([last.kid]);
    expect(untrusted).toEqual([{ kid: beyond.kid, reason: expect.stringContaining(`more than ${TRUST_LIMITS.chainLinks}`) }]);
  });

  it('the gateway checks an unchanged key set once: the same bytes again cost no signature check', () => {
    const trust = new KeyTrust({ trustedKeys: pin(k1) });
    const bytes = bytesOf({ keys: [k2.publicJwk, k1.publicJwk], endorsements: [endorseKey(k2.publicJwk, k1, AT)] });
    expect(trust.check(bytes).keySet.keys.map((k) => k.kid)).toEqual([k2.kid, k1.kid]);
    const spent = trust.signatureChecks;
    expect(spent).toBeGreaterThan(0);
    for (let i = 0; i < 5; i++) trust.check(bytes);
    expect(trust.signatureChecks).toBe(spent);
  });
});

describe('a key endorses one successor: retired by it, it endorses nothing after', () => {
  const e12 = endorseKey(k2.publicJwk, k1, AT);
  // What a retired k1 (its private key leaked) signs later, dated before its real successor's.
  const backdated = endorseKey(x.publicJwk, k1, '2020-01-01T00:00:00Z');
  const both = { keys: [k2.publicJwk, x.publicJwk], endorsements: [backdated, e12] };

  it('pinned with its succession (the key set as built), its other endorsement is ignored unchecked, whatever its date', () => {
    const pinned = { keys: [k1.publicJwk], endorsements: [e12] };
    const result = trustedKeySet(both, pinned);
    expect(result.keySet.keys.map((k) => k.kid)).toEqual([k2.kid]);
    expect(result.untrusted.map((u) => u.kid)).toEqual([x.kid]);
    // One check for the pinned succession, one for the key set's: the other is not the successor and costs nothing.
    expect(result.signatureChecks).toBe(2);
  });

  it('pinned without it, a key shown endorsing two keys endorses neither', () => {
    expect(kids(both, pin(k1))).toEqual([]);
    expect(trustedKeySet(both, pin(k1)).untrusted).toEqual([
      { kid: k2.kid, reason: expect.stringContaining('a key endorses one successor') },
      { kid: x.kid, reason: expect.stringContaining('a key endorses one successor') },
    ]);
  });

  it('a gateway that saw the succession keeps it: a later key set that drops it and shows another is refused', () => {
    const trust = new KeyTrust({ trustedKeys: pin(k1) });
    expect(trust.check(bytesOf({ keys: [k2.publicJwk], endorsements: [e12] })).keySet.keys.map((k) => k.kid)).toEqual([k2.kid]);
    const swapped = trust.check(bytesOf({ keys: [x.publicJwk], endorsements: [backdated] }));
    expect(swapped.keySet.keys).toEqual([]);
    expect(swapped.untrusted.map((u) => u.kid)).toEqual([x.kid]);
  });
});
