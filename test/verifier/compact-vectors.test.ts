/**
 * Compact answers against their vectors (test/vectors/compact/compact.json, written by
 * compact.gen.ts): the genuine entry and absence pass, and the record fetched another way is the
 * one the entry commits to; changed padding, a short answer, a changed entry, another bucket's
 * answer, a statement asking for more bits than its size gives or not signed are refused with the
 * code each names; checked with the log's key, a statement with a later entry logged after it (a
 * store rolled back) is BUILD_SUPERSEDED. The vectors are made again and must be the same bytes.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { recordMatchesEntry, verifyCompactAnswer } from '@merchant-verify/verifier';
import { describe, expect, it } from 'vitest';

const file = join(import.meta.dirname, '../vectors/compact/compact.json');
const v = JSON.parse(readFileSync(file, 'utf8')) as {
  key_set: unknown;
  now: number;
  record: Record<string, unknown>;
  statements: Record<string, unknown>;
  log_vkey: string;
  statement_proofs: Record<string, string>;
  cases: { name: string; domain: string; statement: string; statement_proof?: string; answer: string; code: string | null }[];
};

describe('compact answer vectors', () => {
  it.each(v.cases.map((c) => [c.name, c] as const))('%s', (_, c) => {
    const answer = new Uint8Array(Buffer.from(c.answer, 'base64'));
    const logged =
      c.statement_proof === undefined ? {} : { statementProof: v.statement_proofs[c.statement_proof], log: { vkey: v.log_vkey } };
    const result = verifyCompactAnswer({
      domain: c.domain,
      answer,
      statement: v.statements[c.statement],
      keySet: v.key_set,
      now: v.now,
      ...logged,
    });
    expect(result.code).toBe(c.code);
    if (c.code === null) {
      expect(result.entry).toMatchObject({ domain: c.domain, status: v.record.status, tier: v.record.tier, score: v.record.score });
      expect(recordMatchesEntry(result.entry!, v.record)).toBeNull();
    }
  });

  it('covers both verdicts and every code a compact answer adds', () => {
    const codes = new Set(v.cases.map((c) => c.code));
    for (const code of [
      null,
      'NEVER_AUDITED',
      'PADDING_MISMATCH',
      'INCOMPLETE_PREFIX_ANSWER',
      'PREFIX_MISMATCH',
      'PREFIX_TOO_LONG',
      'BUILD_SUPERSEDED',
    ])
      expect(codes.has(code)).toBe(true);
  });

  it('is what the generator writes', () => {
    const before = readFileSync(file, 'utf8');
    execFileSync(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '../vectors/compact/compact.gen.ts')]);
    expect(readFileSync(file, 'utf8')).toBe(before);
  });
});
