/**
 * The golden table of domain normalization (test/vectors/normalization.json), kept as data so
 * that a verifier or a client in another language can reuse it. It is run on every supported
 * Node.js line: normalization must not depend on the runtime's own URL parser.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { MvrError } from '../../core/errors/errors.ts';
import { normalizeDomain } from '../../core/rules/domain.ts';

interface Case {
  note: string;
  input: string;
  domain?: string;
  error?: string;
}
const { cases } = JSON.parse(readFileSync(new URL('../vectors/normalization.json', import.meta.url), 'utf8')) as { cases: Case[] };

describe(`domain normalization vectors on Node.js ${process.versions.node}`, () => {
  it('holds cases of both kinds, the ones the runtimes disagree on among them', () => {
    expect(cases.filter((c) => c.domain).length).toBeGreaterThan(30);
    expect(cases.filter((c) => c.error).length).toBeGreaterThan(30);
    expect(cases.map((c) => c.input)).toEqual(expect.arrayContaining(['xn--a.com', 'xn--cme-outdoor-hgj.example']));
  });

  it.each(cases.map((c) => [c.note, c] as const))('%s', (_note, c) => {
    let got: string;
    try {
      got = normalizeDomain(c.input);
    } catch (error) {
      got = `error ${(error as MvrError).code}`;
    }
    expect(got).toBe(c.domain ?? `error ${c.error}`);
  });
});
