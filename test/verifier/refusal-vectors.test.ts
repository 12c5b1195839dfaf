/**
 * What a verifier must refuse, against its vectors (test/vectors/refusals/refusals.json, written by
 * refusals.gen.ts): the genuine cosigned checkpoint with a wrong index or path, a forked build's
 * absence proof under the live checkpoint, a rolled-back build's (its statement not the checkpoint's last entry), a checkpoint of another origin, a policy with a name in
 * two groups, a note of 101 signature lines, a policy without a log key, and options that are
 * misuse. Every check runs through the package's compiled JavaScript, as a user's code calls it.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  MvrError,
  parsePolicy,
  VERIFIER_ERROR_CODES,
  verifyAbsence,
  verifyAnswer,
  verifyLogProof,
  verifyWitnessedCheckpoint,
} from '@merchant-verify/verifier';
import { describe, expect, it } from 'vitest';

interface Check {
  name: string;
  call: 'verifyLogProof' | 'verifyAbsence' | 'verifyAnswer' | 'verifyWitnessedCheckpoint' | 'parsePolicy';
  proof?: string;
  checkpoint?: string;
  policy?: string | null;
  log?: boolean | Record<string, unknown>;
  options?: Record<string, unknown>;
  valid?: boolean;
  code?: string;
  throws?: string;
  line?: number;
}
const v = JSON.parse(readFileSync(join(import.meta.dirname, '../vectors/refusals/refusals.json'), 'utf8')) as {
  now: number;
  key_set: unknown;
  log_vkey: string;
  domain: string;
  record: Record<string, unknown>;
  policies: Record<string, string>;
  checkpoints: Record<string, string>;
  record_proofs: Record<string, string>;
  absence_proofs: Record<string, Record<string, unknown>>;
  checks: Check[];
};

/** A value JSON cannot hold, as the vectors write it. */
function jsonValue(value: unknown): unknown {
  const special = value as { $?: string; iso?: string } | null;
  if (typeof special !== 'object' || special === null || special.$ === undefined) return value;
  if (special.$ === 'NaN') return Number.NaN;
  if (special.$ === 'Infinity') return Number.POSITIVE_INFINITY;
  if (special.$ === 'invalid Date') return new Date(Number.NaN);
  if (special.$ === 'Date') return new Date(special.iso!);
  throw new Error(`unknown special value ${special.$}`);
}

/** Runs a check's call: its verdict, or what it threw. */
function run(c: Check): unknown {
  const raw = { now: v.now, ...(c.policy ? { policy: parsePolicy(v.policies[c.policy]!) } : {}), ...(c.options ?? {}) };
  const options = Object.fromEntries(Object.entries(raw).map(([k, value]) => [k, jsonValue(value)]));
  const log = c.log === true ? { vkey: v.log_vkey } : c.log === false || c.log === undefined ? undefined : c.log;
  switch (c.call) {
    case 'parsePolicy':
      return parsePolicy(v.policies[c.policy!]!, c.policy!);
    case 'verifyWitnessedCheckpoint':
      return verifyWitnessedCheckpoint(v.checkpoints[c.checkpoint!]!, options.policy as never, options);
    case 'verifyLogProof':
      return verifyLogProof(v.record, v.record_proofs[c.proof!]!, log as never, options);
    case 'verifyAbsence':
      return verifyAbsence(v.absence_proofs[c.proof!], v.domain, v.key_set, { ...options, ...(log ? { log: log as never } : {}) });
    case 'verifyAnswer': {
      const answerLog = log && typeof log.proof === 'string' ? { ...log, proof: v.record_proofs[log.proof] ?? log.proof } : log;
      const absence = v.absence_proofs[c.proof!];
      const asked = absence ? { domain: v.domain, absence: { proof: absence } } : { answer: v.record };
      return verifyAnswer({ ...asked, keySet: v.key_set, ...options, ...(answerLog ? { log: answerLog as never } : {}) });
    }
  }
}

describe('refusal vectors', () => {
  it('cover every forged case the package README lists', () => {
    const names = v.checks.map((c) => c.name).join('\n');
    for (const forged of [
      /genuine checkpoint, the index of another entry/,
      /path with one bit flipped/,
      /forked build/,
      /rolled-back build/,
      /another origin/,
      /a name in two groups/,
      /101 signature lines/,
      /misuse: maxAgeMs NaN/,
      /misuse: now an invalid Date/,
      /log without vkey/,
    ])
      expect(names).toMatch(forged);
  });

  it('the package README names every vector file with forgeries, and each forgery by its name with its code', () => {
    const readme = readFileSync(join(import.meta.dirname, '../../packages/verifier/README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## What a verifier must refuse'), readme.indexOf('## Entry points'));
    const root = join(import.meta.dirname, '../..');
    const named = [...section.matchAll(/`(test\/vectors\/[\w./-]+\.json)`/g)].map((m) => m[1]!);
    for (const path of named) expect(existsSync(join(root, path)), path).toBe(true);
    const vectors = join(root, 'test/vectors');
    const withForgeries = readdirSync(vectors, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .flatMap((d) =>
        readdirSync(join(vectors, d.name))
          .filter((f) => f.endsWith('.json'))
          .map((f) => `test/vectors/${d.name}/${f}`),
      )
      .map((path) => {
        const data = JSON.parse(readFileSync(join(root, path), 'utf8')) as {
          cases?: { name: string; code?: string | null }[];
          refused?: { name: string; code: string }[];
        };
        const forged = [...(data.cases ?? []), ...(data.refused ?? [])].filter(
          (c) => c.code !== undefined && c.code !== null && c.code !== 'NEVER_AUDITED',
        );
        return { path, forged };
      })
      .filter((f) => f.forged.length > 0);
    expect(withForgeries.map((f) => f.path)).toEqual(
      expect.arrayContaining(['test/vectors/bundle/bundle.json', 'test/vectors/compact/compact.json', 'test/vectors/map-v2/map-v2.json']),
    );
    for (const { path, forged } of withForgeries) {
      expect(named, `${path} is not named in the README's list`).toContain(path);
      for (const c of forged) expect(section, `${path}: ${c.name}`).toContain(`| ${c.name.replaceAll('|', '\\|')} | \`${c.code}\` |`);
    }
    expect(named).toContain('test/vectors/refusals/refusals.json');
  });

  it.each(v.checks)('$name', (c) => {
    if (c.throws) {
      let thrown: unknown;
      try {
        run(c);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, 'a coded error of the package').toBeInstanceOf(MvrError);
      expect((thrown as MvrError).code).toBe(c.throws);
      expect(VERIFIER_ERROR_CODES).toContain((thrown as MvrError).code);
      if (c.line !== undefined) expect(thrown).toMatchObject({ line: c.line });
      return;
    }
    const result = run(c) as { valid?: boolean; code?: string | null };
    if (c.call === 'verifyAnswer') return expect(result.code).toBe(c.valid ? null : c.code);
    if (c.valid) return expect(result).toMatchObject({ valid: true });
    expect(result).toMatchObject({ valid: false, code: c.code });
  });
});
