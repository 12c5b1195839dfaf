/**
 * Proofs with a witness policy, against their vectors (test/vectors/witness/witnessed-proofs.json,
 * written by witnessed-proofs.gen.ts with node:crypto): a record's log proof and an absence proof's
 * statement proof, whose checkpoints carry cosignature lines, checked by `verifyLogProof`,
 * `verifyAbsence` and the one pipeline `verifyAnswer`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parsePolicy, verifyAbsence, verifyAnswer, verifyLogProof } from '@merchant-verify/verifier';
import { describe, expect, it } from 'vitest';

interface Check {
  name: string;
  proof: string;
  policy: string;
  now: number;
  max_age_ms?: number;
  valid: boolean;
  code?: string;
  cosigners?: string[];
  witnessed_at?: number;
}
const v = JSON.parse(readFileSync(join(import.meta.dirname, '../vectors/witness/witnessed-proofs.json'), 'utf8')) as {
  log_vkey: string;
  policies: Record<string, string>;
  record: Record<string, unknown>;
  record_proofs: Record<string, string>;
  absence: { key_set: unknown; domain: string; proof: Record<string, unknown> };
  checks: Check[];
};
const { statement_proof: _, ...withoutStatementProof } = v.absence.proof;

/** The proof a check names, verified under its policy. */
function verify(c: Check) {
  const options = { policy: parsePolicy(v.policies[c.policy]!, c.policy), now: c.now, maxAgeMs: c.max_age_ms };
  if (c.proof.startsWith('absence'))
    return verifyAbsence(c.proof === 'absence' ? v.absence.proof : withoutStatementProof, v.absence.domain, v.absence.key_set, options);
  return verifyLogProof(v.record, v.record_proofs[c.proof]!, { vkey: v.log_vkey }, options);
}

describe('witnessed proof vectors', () => {
  it.each(v.checks)('$name', (c) => {
    const result = verify(c);
    if (!c.valid) return expect(result).toMatchObject({ valid: false, code: c.code });
    expect(result).toMatchObject({ valid: true, witnessedAt: c.witnessed_at });
    expect(result.valid && result.cosigners?.map((x) => x.witness).sort()).toEqual(c.cosigners);
  });

  it('without a policy, the proofs hold as before and say nothing of witnesses', () => {
    const record = verifyLogProof(v.record, v.record_proofs.cosigned!, { vkey: v.log_vkey });
    expect(record).toMatchObject({ valid: true, index: 3 });
    expect(record).not.toHaveProperty('witnessedAt');
    expect(verifyAbsence(withoutStatementProof, v.absence.domain, v.absence.key_set)).not.toHaveProperty('witnessedAt');
  });
});

describe('verifyAnswer with a policy', () => {
  const now = v.checks[0]!.now;
  const policy = parsePolicy(v.policies['two of three']!);
  const other = parsePolicy(v.policies['other witnesses']!);
  // The record's signature is not what these vectors test: the log step's verdict is read from `log` and `witnessed`.
  const keySet = v.absence.key_set;

  it('a record: the log step carries the witness step; `witnessed` says when', () => {
    const log = { proof: v.record_proofs.cosigned!, vkey: v.log_vkey };
    expect(verifyAnswer({ answer: v.record, keySet, log, policy, now })).toMatchObject({
      log: { valid: true, witnessedAt: now - 1_800_000 },
      witnessed: { witnessedAt: now - 1_800_000, cosigners: expect.any(Array) },
    });
    expect(verifyAnswer({ answer: v.record, keySet, log, policy: other, now })).toMatchObject({
      log: { valid: false, code: 'NOT_WITNESSED' },
      witnessed: null,
    });
    expect(verifyAnswer({ answer: v.record, keySet, log, now }).witnessed).toBeNull();
  });

  it('a record with a policy but no log proof is not witnessed', () => {
    expect(verifyAnswer({ answer: v.record, keySet, policy, now }).log).toMatchObject({ valid: false, code: 'NOT_WITNESSED' });
  });

  it('a never-audited answer: the absence step carries the witness step, and decides', () => {
    const asked = { domain: v.absence.domain, keySet, now };
    expect(verifyAnswer({ ...asked, absence: { proof: v.absence.proof }, policy })).toMatchObject({
      code: 'NEVER_AUDITED',
      witnessed: { witnessedAt: now - 1_800_000 },
    });
    expect(verifyAnswer({ ...asked, absence: { proof: v.absence.proof }, policy, maxAgeMs: 2_700_000 })).toMatchObject({
      code: 'NOT_WITNESSED',
      witnessed: null,
    });
    // A policy implies the log check, with the policy's log key: no statement proof is no proof the build was logged.
    expect(verifyAnswer({ ...asked, absence: { proof: withoutStatementProof }, policy }).code).toBe('STATEMENT_NOT_LOGGED');
  });
});
