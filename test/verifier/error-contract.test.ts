/**
 * The verifier package's errors follow its contract: every error it throws is one of its coded
 * classes (a subclass of MvrError) with a code from VERIFIER_ERROR_CODES; verdicts are results.
 * Read from its sources (no plain Error, RangeError or TypeError is constructed) and tried from the
 * outside: each public function called with arbitrary values, as plain JavaScript can call it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as verifier from '@merchant-verify/verifier';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/project.ts';

// The package's own sources and the shared package's it ships in its dist.
const sources = ['packages/verifier/src', 'packages/shared/src'].flatMap((dir) =>
  (readdirSync(join(ROOT, dir), { recursive: true }) as string[])
    .filter((f) => f.endsWith('.ts'))
    .map((f) => ({ file: `${dir}/${f}`, text: readFileSync(join(ROOT, dir, f), 'utf8') })),
);
const errorsTs = readFileSync(join(ROOT, 'packages/shared/src/errors.ts'), 'utf8');
const CODED = [...errorsTs.matchAll(/export class (\w+) extends (?:MvrError|\w+Error)/g)].map((m) => m[1]!);

describe('the verifier package throws only its coded errors', () => {
  it('every class of errors.ts has a code of the list, and every thrown class is one of them', () => {
    expect(CODED).toEqual(expect.arrayContaining(['InvalidArgumentError', 'NoteError', 'InvalidVerifierKeyError', 'PolicyError']));
    const codes = [...errorsTs.matchAll(/static (?:override )?readonly code(?:: string)? = '([A-Z_]+)'/g)].map((m) => m[1]);
    expect(codes.length).toBe(CODED.length);
    for (const code of codes) expect(verifier.VERIFIER_ERROR_CODES).toContain(code);
    for (const { file, text } of sources) {
      for (const m of text.matchAll(/throw new (\w+)\(/g)) expect(CODED, `${file} throws ${m[1]}`).toContain(m[1]);
      expect(text, `${file} constructs a plain error`).not.toMatch(/new (?:Error|RangeError|TypeError)\(/);
    }
  });

  const w = JSON.parse(readFileSync(join(ROOT, 'test/vectors/refusals/refusals.json'), 'utf8')) as {
    now: number;
    key_set: unknown;
    log_vkey: string;
    record: unknown;
    policies: Record<string, string>;
    record_proofs: Record<string, string>;
    absence_proofs: Record<string, unknown>;
    domain: string;
  };
  const policy = verifier.parsePolicy(w.policies['two of three']!);
  const bundles = JSON.parse(readFileSync(join(ROOT, 'test/vectors/bundle/bundle.json'), 'utf8')) as {
    key_set: unknown;
    log_vkey: string;
    cases: { domain: string; bundle: Record<string, unknown> }[];
  };
  // Arbitrary values, and the genuine ones beside them, so that calls reach past the first check.
  const any = fc.anything({
    withBigInt: true,
    withBoxedValues: true,
    withNullPrototype: true,
    withMap: true,
    withSet: true,
    withTypedArray: true,
    withDate: true,
  });
  const or = (...values: unknown[]) => fc.oneof(any, ...values.map((x) => fc.constant(x)));
  const options = fc.oneof(
    any,
    fc.record(
      {
        policy: or(policy, 'quorum none\n'),
        maxAgeMs: or(3_600_000, Number.NaN, '36h', -1),
        now: or(w.now, new Date(Number.NaN)),
        log: or({ vkey: w.log_vkey }, {}),
      },
      { requiredKeys: [] },
    ),
  );

  /** Whatever the call does, it returns or throws a coded error of the package. */
  const onlyCoded = (call: () => unknown) => {
    try {
      call();
    } catch (error) {
      expect(error).toBeInstanceOf(verifier.MvrError);
      expect(verifier.VERIFIER_ERROR_CODES).toContain((error as verifier.MvrError).code);
    }
  };

  it.each([
    ['verifyRecord', fc.tuple(or(w.record), or(w.key_set), options), (a: unknown[]) => verifier.verifyRecord(a[0], a[1], a[2] as never)],
    [
      'verifyLogProof',
      fc.tuple(or(w.record), or(w.record_proofs.genuine!), or({ vkey: w.log_vkey }, undefined), options),
      (a: unknown[]) => verifier.verifyLogProof(a[0], a[1] as string, a[2] as never, a[3] as never),
    ],
    [
      'verifyAbsence',
      fc.tuple(or(w.absence_proofs.genuine), or(w.domain), or(w.key_set), options),
      (a: unknown[]) => verifier.verifyAbsence(a[0], a[1] as string, a[2], a[3] as never),
    ],
    [
      'verifyAnswer',
      fc.tuple(
        fc.oneof(
          any,
          fc.record(
            {
              answer: or(w.record, { status: 'unverified', domain: w.domain }),
              keySet: or(w.key_set),
              domain: or(w.domain),
              absence: or({ proof: w.absence_proofs.genuine }, { unavailable: 'down' }, { proof: null }),
              log: or({ vkey: w.log_vkey, proof: w.record_proofs.genuine }, { vkey: w.log_vkey }),
            },
            { requiredKeys: [] },
          ),
        ),
        options,
      ),
      (a: unknown[]) =>
        verifier.verifyAnswer(typeof a[0] === 'object' && a[0] !== null ? ({ ...(a[1] as object), ...a[0] } as never) : (a[0] as never)),
    ],
    [
      'verifyBundle',
      fc.tuple(
        fc.oneof(
          any,
          fc.record(
            {
              bundle: or(...bundles.cases.map((c) => c.bundle), { ...bundles.cases[0]!.bundle, place: { index: 1n, leaf: [], path: {} } }),
              keySet: or(bundles.key_set),
              domain: or(bundles.cases[0]!.domain),
              log: or({ vkey: bundles.log_vkey }),
            },
            { requiredKeys: [] },
          ),
        ),
        options,
      ),
      (a: unknown[]) =>
        verifier.verifyBundle(typeof a[0] === 'object' && a[0] !== null ? ({ ...(a[1] as object), ...a[0] } as never) : (a[0] as never)),
    ],
    ['parsePolicy', fc.tuple(or(w.policies['two of three']!), any), (a: unknown[]) => verifier.parsePolicy(a[0] as string, a[1] as string)],
    [
      'verifyWitnessedCheckpoint',
      fc.tuple(or(w.record_proofs.genuine!.split('\n\n').slice(1).join('\n\n')), or(policy), options),
      (a: unknown[]) => verifier.verifyWitnessedCheckpoint(a[0] as string, a[1] as never, a[2] as never),
    ],
    ['parseKeySet', fc.tuple(or(w.key_set)), (a: unknown[]) => verifier.parseKeySet(a[0])],
    ['stalenessOf', fc.tuple(or(w.record), or(w.now)), (a: unknown[]) => verifier.stalenessOf(a[0] as never, a[1] as never)],
    ['isNeverAudited', fc.tuple(any), (a: unknown[]) => verifier.isNeverAudited(a[0])],
  ] as const)('%s, called with anything', (_name, args, call) => {
    fc.assert(
      fc.property(args, (a) => onlyCoded(() => call(a as unknown[]))),
      { numRuns: 500 },
    );
  });
});
