/**
 * Audits a person can fix in one go, through the CLI: one pass reports every kind of problem
 * (schema, dates in the future, records too large, duplicates), the text bounded to the first few
 * of a kind, `--json` listing every one; exit 3 and nothing published, as for any bad audit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AuditProblem, PROBLEMS_SHOWN_PER_KIND } from '../../core/errors/errors.ts';
import { MAX_RECORD_BYTES } from '../../core/files.ts';
import { audit, jsonl } from '../support/audits.ts';
import { expectUntouched, liveCopy } from '../support/bad-audits.ts';
import { buildArgs, lines, runCli } from '../support/cli.ts';
import { auditsFolder, makeProject, type Project, removeTempDirs } from '../support/project.ts';

let base: Project;

beforeAll(async () => {
  base = await makeProject();
});
afterAll(removeTempDirs);

/** Runs `mvr build` of the sample audits plus `files` into a copy of the project; checks nothing was published. */
async function build(files: Record<string, string>, extra: string[] = []) {
  const live = await liveCopy(base);
  const res = await runCli(buildArgs({ ...live.q, auditsDir: await auditsFolder(files) }, extra));
  await expectUntouched(live);
  // Progress lines (one every MVR_PROGRESS_MS without a terminal) aside.
  return { ...res, err: lines(res.stderr).filter((l) => !l.startsWith('build: ')) };
}

type JsonFailure = { ok: false; code: string; problems: AuditProblem[]; problem_counts: Record<string, number> };

const LATER = '2099-01-01T00:00:00Z';
/** 2,000 shops of one registrable domain: one mistake, 1,999 duplicates. */
const SHOPS = { 'shops.jsonl': jsonl(...Array.from({ length: 2000 }, (_, i) => audit(`shop-${i + 1}.example.com`))) };

describe.concurrent('2,000 subdomain audits of one registrable domain', () => {
  it('the text names the first few duplicates, each with both places, then counts the rest', async () => {
    const res = await build(SHOPS);
    expect(res.code, res.stderr).toBe(3);
    const shown = res.err.filter((l) => l.includes('duplicate domain "'));
    expect(shown).toHaveLength(PROBLEMS_SHOWN_PER_KIND);
    expect(shown[0]).toMatch(
      /shops\.jsonl:2: domain: duplicate domain "example\.com" \(.*"shop-2\.example\.com" here\), first audited at \S*shops\.jsonl:1$/,
    );
    expect(res.err).toContain(`... and ${(1999 - PROBLEMS_SHOWN_PER_KIND).toLocaleString('en-US')} more duplicate domains`);
    expect(res.err.at(-1)).toBe('mvr: INVALID_AUDITS: 1999 problems in the audits; nothing was written');
    expect(res.err).toHaveLength(PROBLEMS_SHOWN_PER_KIND + 2);
    for (const line of res.err) expect(line.length).toBeLessThan(400);
  });

  it('--json lists every duplicate as an object of its own, with the counts by kind', async () => {
    const res = await build(SHOPS, ['--json']);
    expect(res.code, res.stderr).toBe(3);
    const body = JSON.parse(res.stdout) as JsonFailure;
    expect(body).toMatchObject({ ok: false, code: 'INVALID_AUDITS', problem_counts: { duplicate: 1999 } });
    expect(body.problems).toHaveLength(1999);
    expect(body.problems.map((p) => p.source.replace(/.*[/\\]/, ''))).toEqual(
      Array.from({ length: 1999 }, (_, i) => `shops.jsonl:${i + 2}`),
    );
    for (const p of body.problems) expect(p).toMatchObject({ member: 'domain', kind: 'duplicate' });
  });
});

describe('every kind of problem in one pass', () => {
  const blockers = Array.from({ length: MAX_RECORD_BYTES / 40 }, (_, i) => `blocker ${i}, long enough to fill a record`);
  const files = {
    'mixed.jsonl': jsonl(
      audit('mixed-1.example'),
      // A schema error and a date in the future in one audit: both reported now, not one after the other's fix.
      audit('mixed-2.example', { score: 200, last_audited_at: LATER }),
      audit('mixed-3.example', { first_seen: LATER, last_audited_at: LATER }),
      audit('mixed-4.example', { evidence: { ok: true, coverage: 1, site_coverage: 1, engines_ran: ['chatgpt'], blockers } }),
      audit('www.mixed-1.example'),
    ),
  };

  it('reports the schema error, the dates, the record too large and the duplicate together; exit 3', async () => {
    const res = await build(files);
    expect(res.code, res.stderr).toBe(3);
    const at = (line: number) => res.err.filter((l) => new RegExp(`mixed\\.jsonl:${line}: `).test(l));
    expect(at(2)).toEqual([
      expect.stringMatching(/^\S*mixed\.jsonl:2: score: /),
      expect.stringMatching(/^\S*mixed\.jsonl:2: last_audited_at: 2099-01-01T00:00:00Z is later than the build's issued_at/),
    ]);
    expect(at(3)).toEqual([expect.stringMatching(/: first_seen: 2099/), expect.stringMatching(/: last_audited_at: 2099/)]);
    expect(at(4)).toEqual([expect.stringMatching(new RegExp(`its record would be \\d+ bytes, more than the ${MAX_RECORD_BYTES} bytes`))]);
    expect(at(5)).toEqual([expect.stringMatching(/duplicate domain "mixed-1\.example".*first audited at \S*mixed\.jsonl:1$/)]);
    expect(res.err.at(-1)).toMatch(/^mvr: INVALID_AUDITS: 6 problems/);
  });

  it('--json gives each its kind', async () => {
    const res = await build(files, ['--json']);
    expect(res.code, res.stderr).toBe(3);
    const body = JSON.parse(res.stdout) as JsonFailure;
    expect(body.problem_counts).toEqual({ schema: 1, future_date: 3, record_too_large: 1, duplicate: 1 });
    expect(body.problems.map((p) => [p.source.replace(/.*[/\\]/, ''), p.member ?? null, p.kind])).toEqual([
      ['mixed.jsonl:2', 'score', 'schema'],
      ['mixed.jsonl:2', 'last_audited_at', 'future_date'],
      ['mixed.jsonl:3', 'first_seen', 'future_date'],
      ['mixed.jsonl:3', 'last_audited_at', 'future_date'],
      ['mixed.jsonl:4', null, 'record_too_large'],
      ['mixed.jsonl:5', 'domain', 'duplicate'],
    ]);
  });
});
