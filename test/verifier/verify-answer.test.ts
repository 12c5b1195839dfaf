/**
 * verifyAnswer, the one pipeline every caller uses: which step decides the verdict. The full
 * round trips through a real build (absence and log proofs that hold) run through `mvr verify`
 * and the verify page; here the order of the steps, with real signatures.
 */

import { verifyAnswer } from '@merchant-verify/verifier';
import { describe, expect, it } from 'vitest';
import { formatVerifierKey, noteKeyId } from '#shared';
import { generatePrivateJwk, loadSigningKey, signRecord } from '../../core/crypto/signing.ts';
import { unverifiedRecord } from '../../core/rules/record.ts';
import { ISSUER, NOW_ISO, SCHEMA_URL } from '../support/project.ts';
import { sha256 } from '../support/tlog.ts';

const DOMAIN = 'pipeline.example';
const key = loadSigningKey(generatePrivateJwk());
const keySet = { keys: [key.publicJwk] };
const neverAudited = unverifiedRecord(DOMAIN, { issuer: ISSUER, schemaUrl: SCHEMA_URL, issuedAt: NOW_ISO });
const record = signRecord({ ...neverAudited, status: 'verified' }, key);
// A well-formed log key; the proofs below do not hold under it.
const logKey = { name: `${ISSUER}/log`, publicKey: new Uint8Array(32).fill(7) };
const vkey = formatVerifierKey({ ...logKey, id: noteKeyId(sha256, logKey.name, logKey.publicKey) });

describe('verifyAnswer', () => {
  it('a signed record of the domain asked is verified: code null', () => {
    const v = verifyAnswer({ answer: record, keySet, domain: DOMAIN });
    expect(v).toMatchObject({ code: null, signature: { valid: true }, absence: null, log: null, build: null });
  });

  it('the signature decides before the log proof; a valid record with a proof that does not hold fails with the log code', () => {
    const tampered = { ...record, score: 99 };
    expect(verifyAnswer({ answer: tampered, keySet, log: { proof: 'not a proof\n', vkey } })).toMatchObject({
      code: 'BAD_SIGNATURE',
      log: { valid: false },
    });
    const v = verifyAnswer({ answer: record, keySet, log: { proof: 'not a proof\n', vkey } });
    expect(v.signature.valid).toBe(true);
    expect(v.code).toBe(v.log?.valid === false ? v.log.code : 'a failed log step');
  });

  it('a never-audited answer is decided by its absence step, never by a log proof', () => {
    const v = verifyAnswer({
      answer: neverAudited,
      keySet,
      domain: DOMAIN,
      absence: { unavailable: 'no proof here' },
      log: { proof: 'x', vkey },
    });
    expect(v).toMatchObject({
      code: 'NOT_ABSENT',
      absence: { valid: false, code: 'NOT_ABSENT', message: 'no proof here' },
      log: null,
      signature: { code: 'UNSIGNED' },
    });
    expect(verifyAnswer({ answer: neverAudited, keySet, domain: DOMAIN, absence: { proof: { nope: true } } }).code).toBe(
      'MALFORMED_ABSENCE_PROOF',
    );
  });

  it('a never-audited answer given without an absence step is judged by its signature alone: UNSIGNED', () => {
    expect(verifyAnswer({ answer: neverAudited, keySet, domain: DOMAIN })).toMatchObject({ code: 'UNSIGNED', absence: null });
  });

  it('with no answer, the never-audited answer of the domain stands for a saved absence proof', () => {
    const v = verifyAnswer({ keySet, domain: DOMAIN, absence: { proof: {} } });
    expect(v.answer).toMatchObject({ domain: DOMAIN, status: 'unverified', score: null });
    expect(v.code).toBe('MALFORMED_ABSENCE_PROOF');
  });

  it('throws only on misuse: a key set that is not one', () => {
    expect(() => verifyAnswer({ answer: record, keySet: { keys: [{ kty: 'OKP', crv: 'Ed25519', x: 'AA', d: 'AA' }] } })).toThrow(
      expect.objectContaining({ code: 'INVALID_KEY_SET' }),
    );
  });
});
