/**
 * Offline bundles against their vectors (test/vectors/bundle/bundle.json, written by bundle.gen.ts):
 * the genuine record and never-audited bundles pass; a record swapped for another domain's, a place
 * moved in the map, a statement whose signature is broken or whose log proof is of another
 * checkpoint, and the rest, are refused with the code each names. The vectors are made again and
 * must be the same bytes. Every check runs through the package's compiled JavaScript.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { verdictOf, verifyBundle } from '@merchant-verify/verifier';
import { describe, expect, it } from 'vitest';

const file = join(import.meta.dirname, '../vectors/bundle/bundle.json');
const v = JSON.parse(readFileSync(file, 'utf8')) as {
  key_set: unknown;
  log_vkey: string;
  now: number;
  cases: { name: string; domain: string; bundle: unknown; code: string | null }[];
};

describe('bundle vectors', () => {
  it.each(v.cases.map((c) => [c.name, c] as const))('%s', (_, c) => {
    const result = verifyBundle({ bundle: c.bundle, domain: c.domain, keySet: v.key_set, log: { vkey: v.log_vkey }, now: v.now });
    expect(result.code).toBe(c.code);
    const verdict = verdictOf(result);
    expect(verdict).toMatchObject({ valid: c.code === null, code: c.code });
    // A refusal says why, in the words of the step that refused.
    if (c.code !== null) expect(verdict.message).not.toBe(c.code);
    expect(result.build).toBe(c.code === null || c.code === 'NEVER_AUDITED' ? '20261120T120000Z-0000000000bb' : null);
  });

  it('covers each code a bundle adds, and both verdicts', () => {
    const codes = new Set(v.cases.map((c) => c.code));
    for (const code of [
      null,
      'NEVER_AUDITED',
      'MALFORMED_BUNDLE',
      'RECORD_NOT_IN_MAP',
      'DOMAIN_MISMATCH',
      'STATEMENT_NOT_SIGNED',
      'STATEMENT_NOT_LOGGED',
    ])
      expect(codes.has(code)).toBe(true);
  });

  it('is what the generator writes', () => {
    const before = readFileSync(file, 'utf8');
    execFileSync(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '../vectors/bundle/bundle.gen.ts')]);
    expect(readFileSync(file, 'utf8')).toBe(before);
  });
});
