/**
 * The portable verifier (`merchant-verify/verifier`) against records the real build signed:
 * every sample record verifies; each way a record can fail has its stable code; a key set with
 * private members is refused. (Staleness is in verify-record-staleness.test.ts.)
 */

import type { KeySet } from '@merchant-verify/verifier';
import { KEY_SET_PATH, parseKeySet, verifyRecord } from '@merchant-verify/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '#shared';
import { generatePrivateJwk, loadSigningKey, signRecord } from '../../core/crypto/signing.ts';
import { cleanup } from '../support/gateway.ts';
import { liveManifest, liveRecord, liveRecords, publishedKeySet, type StoredRecord } from '../support/outputs.ts';
import { GOLD, makeProject, NOW, type Project } from '../support/project.ts';

let signed: Project;
let unsigned: Project;
let keySet: KeySet;
let gold: StoredRecord;

beforeAll(async () => {
  [signed, unsigned] = await Promise.all([makeProject(), makeProject({ sign: false })]);
  keySet = (await publishedKeySet(signed)).keySet;
  gold = await liveRecord(signed, GOLD);
});
afterAll(cleanup);

/** Live records parsed, by the domain their file is named for (not the one they name: that is what is checked). */
function parsedByFileName(files: Map<string, Buffer>): Map<string, Record<string, unknown>> {
  return new Map([...files].map(([domain, bytes]) => [domain, JSON.parse(bytes.toString('utf8')) as Record<string, unknown>]));
}

/** The record text with its first occurrence of `from` replaced (a one-character change when both are one character). */
function edited(text: string, from: string, to: string): Record<string, unknown> {
  const at = text.indexOf(from);
  if (at < 0) throw new Error(`"${from}" not in the record`);
  return JSON.parse(text.slice(0, at) + to + text.slice(at + from.length)) as Record<string, unknown>;
}

describe('verifyRecord against records signed by the build', () => {
  it('verifies every sample record with the published key set, for its own domain', async () => {
    const records = parsedByFileName(await liveRecords(signed));
    expect(records.size).toBe((await liveManifest(signed)).records);
    expect(records.size).toBeGreaterThanOrEqual(30);
    for (const [domain, record] of records) {
      const result = verifyRecord(record, keySet, { domain, now: NOW });
      expect(result, domain).toMatchObject({ valid: true, keyId: signed.kid, status: record.status });
    }
  });

  it('accepts the key set as raw JSON exactly as downloaded (not only a parsed KeySet)', () => {
    const raw: unknown = JSON.parse(JSON.stringify(keySet));
    expect(verifyRecord(gold.record, raw)).toMatchObject({ valid: true, keyId: signed.kid, status: 'verified' });
    expect(KEY_SET_PATH).toBe('/.well-known/merchant-verify-keys.json');
  });

  it('reports UNSIGNED (never a pass) for every record of an unsigned build', async () => {
    const emptySet = (await publishedKeySet(unsigned)).keySet;
    expect(emptySet.keys).toEqual([]);
    const records = parsedByFileName(await liveRecords(unsigned));
    expect(records.size).toBeGreaterThan(0);
    for (const [domain, record] of records) {
      expect(record).not.toHaveProperty('signature');
      expect(record).not.toHaveProperty('key_id');
      // Neither an empty set nor a set that has keys makes an unsigned record valid.
      expect(verifyRecord(record, emptySet, { domain }), domain).toMatchObject({ valid: false, code: 'UNSIGNED' });
      expect(verifyRecord(record, keySet, { domain }), domain).toMatchObject({ valid: false, code: 'UNSIGNED' });
    }
  });

  it('reports UNSIGNED when the signature members are stripped from a signed record', () => {
    const { key_id: _k, signature: _s, ...rest } = gold.record;
    expect(verifyRecord(rest, keySet)).toMatchObject({ valid: false, code: 'UNSIGNED' });
  });

  it('reports BAD_SIGNATURE for one flipped character anywhere in the signed content', () => {
    expect(gold.text).toContain('"archetype":"d2c_brand"');
    const cases: [string, string][] = [
      ['d2c_brand', 'd2c_brane'], // a string value
      ['"score":93.5', '"score":93.6'], // a number
      ['"ok":true', '"ok":true '], // whitespace only: same content, must still verify (checked below)
      ['acme-outdoor', 'acme-outdoos'], // the domain
      ['"visibility":95', '"visibility":96'], // a sub-score
    ];
    for (const [from, to] of cases) {
      const record = edited(gold.text, from, to);
      const result = verifyRecord(record, keySet);
      if (from === '"ok":true') expect(result.valid, 'whitespace is not content').toBe(true);
      else expect(result, `${from} -> ${to}`).toMatchObject({ valid: false, code: 'BAD_SIGNATURE', keyId: signed.kid });
    }
  });

  it('reports BAD_SIGNATURE for one flipped character inside the signature', () => {
    const sig = gold.record.signature as string;
    const i = 'ed25519:'.length + 20;
    const flipped = sig.slice(0, i) + (sig[i] === 'A' ? 'B' : 'A') + sig.slice(i + 1);
    expect(verifyRecord({ ...gold.record, signature: flipped }, keySet)).toMatchObject({ valid: false, code: 'BAD_SIGNATURE' });
  });

  it('reports BAD_SIGNATURE for a member added to or removed from a signed record', () => {
    expect(verifyRecord({ ...gold.record, extra: true }, keySet)).toMatchObject({ valid: false, code: 'BAD_SIGNATURE' });
    const { flags: _f, ...withoutFlags } = gold.record;
    expect(verifyRecord(withoutFlags, keySet)).toMatchObject({ valid: false, code: 'BAD_SIGNATURE' });
  });

  it('reports UNKNOWN_KEY for a key_id the set does not list, and for a record signed by another key', async () => {
    expect(verifyRecord({ ...gold.record, key_id: 'no-such-key' }, keySet)).toMatchObject({
      valid: false,
      code: 'UNKNOWN_KEY',
      keyId: 'no-such-key',
    });
    // A real record signed by a key that is not published (the key set never "tries them all").
    const other = loadSigningKey(generatePrivateJwk());
    const { key_id: _k, signature: _s, ...content } = gold.record;
    const foreign: Record<string, unknown> = signRecord(content, other);
    expect(foreign.key_id).toBe(other.kid);
    expect(verifyRecord(foreign, keySet)).toMatchObject({ valid: false, code: 'UNKNOWN_KEY', keyId: other.kid });
    // ...and it verifies once that key is in the set: the failure was the key, not the record.
    expect(verifyRecord(foreign, { keys: [other.publicJwk] })).toMatchObject({ valid: true, keyId: other.kid });
    // The build's key_id pointing at the foreign key's entry is a bad signature, not a pass.
    const swapped = { keys: [{ ...other.publicJwk, kid: signed.kid! }] };
    expect(verifyRecord(gold.record, swapped)).toMatchObject({ valid: false, code: 'BAD_SIGNATURE' });
  });

  it('reports MALFORMED_SIGNATURE and MALFORMED_RECORD for broken signature members', () => {
    expect(verifyRecord({ ...gold.record, signature: 'rsa:abc' }, keySet)).toMatchObject({ valid: false, code: 'MALFORMED_SIGNATURE' });
    expect(verifyRecord({ ...gold.record, signature: 'ed25519:AAAA' }, keySet)).toMatchObject({
      valid: false,
      code: 'MALFORMED_SIGNATURE',
    });
    expect(verifyRecord({ ...gold.record, signature: '' }, keySet)).toMatchObject({ valid: false, code: 'MALFORMED_SIGNATURE' });
    const { key_id: _k, ...noKeyId } = gold.record;
    expect(verifyRecord(noKeyId, keySet)).toMatchObject({ valid: false, code: 'MALFORMED_RECORD' });
    const { signature: _s, ...noSignature } = gold.record;
    expect(verifyRecord(noSignature, keySet)).toMatchObject({ valid: false, code: 'MALFORMED_RECORD' });
    for (const notARecord of [null, 'text', 42, [gold.record]]) {
      expect(verifyRecord(notARecord, keySet)).toMatchObject({ valid: false, code: 'MALFORMED_RECORD', status: null });
    }
  });

  it('reports DOMAIN_MISMATCH when the valid record is for another domain than the one asked for', () => {
    expect(verifyRecord(gold.record, keySet, { domain: GOLD })).toMatchObject({ valid: true });
    const result = verifyRecord(gold.record, keySet, { domain: 'bluebird-books.example' });
    expect(result).toMatchObject({ valid: false, code: 'DOMAIN_MISMATCH', keyId: signed.kid });
    if (!result.valid) expect(result.message).toContain(GOLD);
  });

  it('refuses a key set containing a private key ("d") with INVALID_KEY_SET', () => {
    const priv = generatePrivateJwk();
    const leaked = { keys: [{ ...keySet.keys[0]!, d: priv.d }] };
    let caught: unknown;
    try {
      verifyRecord(gold.record, leaked);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(Error);
    expect((caught as { code?: unknown }).code).toBe('INVALID_KEY_SET');
    expect(() => parseKeySet(leaked)).toThrow(/private/);
    // The private value never appears in the error message.
    expect((caught as Error).message).not.toContain(priv.d);
  });

  it('reads a key set that also lists keys of other types with those skipped: the record still verifies', () => {
    const k = keySet.keys[0]!;
    const mlDsa = { kty: 'AKP', alg: 'ML-DSA-65', pub: 'A'.repeat(2603), kid: 'pq-1' };
    const rsa = { kty: 'RSA', n: 'A'.repeat(342), e: 'AQAB', kid: k.kid };
    expect(verifyRecord(gold.record, { keys: [mlDsa, k, rsa, { ...k, kty: 'RSA' }, { ...k, crv: 'X25519' }] })).toMatchObject({
      valid: true,
      keyId: k.kid,
    });
    // A set of foreign keys only has no key for the record: UNKNOWN_KEY, not a refused set.
    expect(verifyRecord(gold.record, { keys: [mlDsa] })).toMatchObject({ valid: false, code: 'UNKNOWN_KEY' });
  });

  it('refuses other malformed key sets with INVALID_KEY_SET', () => {
    const k = keySet.keys[0]!;
    const identityKey = 'AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
    const bad: unknown[] = [
      null,
      {},
      { keys: 'x' },
      { keys: [{ ...k, x: 'short' }] },
      { keys: [k, k] },
      { keys: [k, { ...k, kid: 'weak', x: identityKey }] },
      { keys: [k, { kty: 'RSA', n: 'AQAB', e: 'AQAB', d: 'AQAB' }] },
    ];
    for (const set of bad) {
      expect(() => verifyRecord(gold.record, set), JSON.stringify(set)).toThrow(expect.objectContaining({ code: 'INVALID_KEY_SET' }));
    }
  });

  it('signs exactly the RFC 8785 bytes of the record without key_id and signature (the file is canonical)', () => {
    expect(gold.text).toBe(canonicalJson(gold.record));
  });
});
