/**
 * `mvr verify`'s verdict and exit code never disagree: for every code the verifier package can
 * answer with (and for a pass), whichever step decided and whatever the other steps say, the
 * JSON's `valid` and `code` are the pipeline's verdict, the exit code is the error registry's for
 * that code (0 only when valid), and the text's first line states the same verdict before any claim.
 */
import { type AnswerVerification, VERIFIER_ERROR_CODES, type VerifierErrorCode } from '@merchant-verify/verifier';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { present } from '../../cli/verify-output.ts';
import { ERROR_REGISTRY } from '../../core/errors/registry.ts';

const checkpoint = { origin: 'merchant-verify.example/log', size: 34, hash: new Uint8Array(32), extension: [] };
const staleness = { state: 'current', lastAuditedAt: '2026-10-15T12:00:00.000Z', nextAuditAt: null, ageDays: 3, overdueDays: 0 } as const;

/** A step's result: valid, or failed with some code of the package. */
const step = <T>(valid: T) =>
  fc.oneof(
    fc.constant(null),
    fc.constant(valid),
    fc.record({ valid: fc.constant(false as const), code: fc.constantFrom(...VERIFIER_ERROR_CODES), message: fc.string() }),
  );

/** A verification as the pipeline may return it: the verdict `code` beside steps that agree with it or not. */
const verification = fc
  .record({
    code: fc.constantFrom<VerifierErrorCode | null>(null, ...VERIFIER_ERROR_CODES),
    signatureValid: fc.boolean(),
    signatureCode: fc.constantFrom(...VERIFIER_ERROR_CODES),
    absence: step({ valid: true as const, build: 'b1', issuedAt: '2026-11-01T00:00:00.000Z', keyId: 'k1', size: 7 }),
    log: step({ valid: true as const, index: 3, checkpoint }),
    witnessed: fc.option(fc.constant({ witnessedAt: 1_700_000_000_000, cosigners: [{ witness: 'w1', time: 1_700_000_000_000 }] })),
    claims: fc.record({
      status: fc.constantFrom('verified', 'flagged', 'unverified'),
      tier: fc.constantFrom('gold', null),
      score: fc.double(),
    }),
  })
  .map(
    (v) =>
      ({
        code: v.code,
        answer: { domain: 'acme-outdoor.example', ...v.claims },
        signature: v.signatureValid
          ? { valid: true, keyId: 'k1', status: v.claims.status, staleness }
          : { valid: false, code: v.signatureCode, message: 'no', status: v.claims.status, staleness },
        absence: v.absence,
        log: v.log,
        staleness,
        build: null,
        witnessed: v.witnessed,
      }) as unknown as AnswerVerification,
  );

describe('mvr verify: the verdict and the exit code agree', () => {
  it('for every code: valid only with exit 0; the exit code is the registry’s; the text leads with the verdict', () => {
    fc.assert(
      fc.property(verification, fc.boolean(), (v, policy) => {
        const { json, text, exitCode } = present(v, 'record.json', { policy });
        expect(json.valid).toBe(v.code === null);
        expect(json.code).toBe(v.code);
        expect(exitCode).toBe(v.code === null ? 0 : ERROR_REGISTRY[v.code].exit);
        expect(json.valid).toBe(exitCode === 0);
        expect(Object.keys(json).slice(0, 3)).toEqual(['valid', 'code', 'message']);
        const first = text.split('\n')[0]!;
        expect(
          first.startsWith(v.code === null ? 'VALID: ' : `${v.code === 'NEVER_AUDITED' ? 'NOT VERIFIED' : 'INVALID'} (${v.code})`),
        ).toBe(true);
        // What the answer claims is never what a failed verification leads with.
        if (v.code !== null) expect(text.indexOf('claims')).toBeGreaterThan(text.indexOf('signature'));
      }),
      { numRuns: 500 },
    );
  });

  it('no code of the package exits 0', () => {
    for (const code of VERIFIER_ERROR_CODES) expect(ERROR_REGISTRY[code].exit, code).not.toBe(0);
  });
});
