/**
 * Prefix answers against their vectors (test/vectors/prefix/prefix.json, written by prefix.gen.ts):
 * the genuine record and absence pass; a gateway that drops, adds or alters a record or a leaf,
 * cuts the range proof, leaves out a neighbour, lies about the prefix or its length, or pads to
 * another size is refused with the code each names. The vectors are made again and must be the
 * same bytes. Every check runs through the package's compiled JavaScript, as a user's code calls it.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { verifyPrefixAnswer } from '@merchant-verify/verifier';
import { describe, expect, it } from 'vitest';

const file = join(import.meta.dirname, '../vectors/prefix/prefix.json');
const v = JSON.parse(readFileSync(file, 'utf8')) as {
  key_set: unknown;
  now: number;
  cases: { name: string; domain: string; answer: unknown; code: string | null }[];
};

const PREFIX_CODES = ['MALFORMED_PREFIX_ANSWER', 'PREFIX_MISMATCH', 'PADDING_MISMATCH', 'INCOMPLETE_PREFIX_ANSWER', 'STATEMENT_NOT_SIGNED'];

describe('prefix answer vectors', () => {
  it.each(v.cases.map((c) => [c.name, c] as const))('%s', (_, c) => {
    const result = verifyPrefixAnswer({ domain: c.domain, answer: c.answer, keySet: v.key_set, now: v.now });
    expect(result.code).toBe(c.code);
    if (c.code === null) expect(result.answer.domain).toBe(c.domain);
    // A prefix answer that does not hold names no build; one that holds, with a record that does not, does.
    if (PREFIX_CODES.includes(c.code ?? '')) expect(result.build).toBeNull();
    else expect(result.build).toBe('20261120T120000Z-0000000000aa');
  });

  it('covers every code a prefix answer adds, and both verdicts', () => {
    const codes = new Set(v.cases.map((c) => c.code));
    for (const code of [null, 'NEVER_AUDITED', ...PREFIX_CODES, 'BAD_SIGNATURE']) expect(codes.has(code)).toBe(true);
  });

  it('is what the generator writes', () => {
    const before = readFileSync(file, 'utf8');
    execFileSync(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '../vectors/prefix/prefix.gen.ts')]);
    expect(readFileSync(file, 'utf8')).toBe(before);
  });
});
