/** Bad audits that only show across files (one domain under two spellings), and bad audits through the CLI: exit code, problems named, nothing published. */
import { basename } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AuditProblem, formatProblem } from '../../core/errors/errors.ts';
import { audit, jsonl } from '../support/audits.ts';
import { expectUntouched, liveCopy, rejected } from '../support/bad-audits.ts';
import { buildArgs, lines, runCli } from '../support/cli.ts';
import { readCurrentRecords } from '../support/outputs.ts';
import { auditsFolder, makeProject, type Project, removeTempDirs } from '../support/project.ts';

/** A project with a good build (a copy of the plain one); each case copies it (test/support/bad-audits.ts). */
let base: Project;

beforeAll(async () => {
  base = await makeProject();
});
afterAll(removeTempDirs);

describe.concurrent('duplicate domains after normalization', () => {
  it('two spellings of one domain in two files: one duplicate problem naming both sources, nothing published', async () => {
    const error = await rejected(base, {
      'a.jsonl': jsonl(audit('Shop.Example.com')),
      'b.json': JSON.stringify(audit('https://www.shop.example.com/x')),
    });
    expect(error.problems).toHaveLength(1);
    const problem = error.problems[0]!;
    expect(problem).toMatchObject({ member: 'domain', kind: 'duplicate' });
    const text = formatProblem(problem);
    expect(text).toMatch(/duplicate/);
    expect(text).toContain('"example.com"');
    expect(text).toMatch(/a\.jsonl:1\b/);
    expect(text).toMatch(/b\.json\b/);
    const live = await readCurrentRecords(error.live.q.recordsDir);
    expect(live.has('example.com')).toBe(false);
    expect(live.size).toBe(33);
  });

  it('found by the index in a thread of its own (as a build of INDEX_THREAD_FROM records or more runs it): the same problem, nothing published', async () => {
    const error = await rejected(
      base,
      { 'a.jsonl': jsonl(audit('Shop.Example.com')), 'b.json': JSON.stringify(audit('https://www.shop.example.com/x')) },
      { indexThreadFrom: 0 },
    );
    expect(error.problems.map(formatProblem)).toEqual([
      expect.stringMatching(/a\.jsonl:1\b.*"example\.com".*b\.json\b|b\.json\b.*"example\.com".*a\.jsonl:1\b/),
    ]);
    expect(error.problems[0]).toMatchObject({ member: 'domain', kind: 'duplicate' });
    expect((await readCurrentRecords(error.live.q.recordsDir)).size).toBe(33);
  });

  it('a sample domain audited again under another spelling, three times, across workers', async () => {
    const error = await rejected(
      base,
      { 'again.jsonl': jsonl(audit('WWW.ACME-OUTDOOR.example'), audit('x1.example'), audit('https://acme-outdoor.example./')) },
      { workers: 2, batchSize: 1 },
    );
    // One problem an audit after the first in input order (again.jsonl sorts before verified.jsonl), each naming both places.
    expect(error.problems).toHaveLength(2);
    const [third, sample] = error.problems.map(formatProblem);
    for (const text of [third!, sample!]) {
      expect(text).toContain('"acme-outdoor.example"');
      expect(text).toMatch(/first audited at \S*again\.jsonl:1$/);
    }
    expect(third).toMatch(/again\.jsonl:3: domain: /);
    expect(third).toContain('"https://acme-outdoor.example./" here');
    expect(sample).toMatch(/verified\.jsonl:1: domain: /);
    expect(error.byKind).toEqual({ duplicate: 2 });
  });
});

describe.concurrent('bad audits through the CLI', () => {
  const badFiles = {
    'bad.jsonl': jsonl(
      audit('cli-1.example'),
      audit('cli-2.example', { sub_scores: { visibility: 101, recommendation_rate: 1, technical_readiness: 1 } }),
      '{oops',
      audit('cli-4.example'),
      audit('cli-5.example', { score: null }),
    ),
  };

  it('exits 3 with one stderr line per problem, naming file:line and member', async () => {
    const live = await liveCopy(base);
    const auditsDir = await auditsFolder(badFiles);
    const res = await runCli(buildArgs({ ...live.q, auditsDir }));
    expect(res.code, res.stderr).toBe(3);
    expect(res.stdout).toBe('');
    // Progress lines (one every MVR_PROGRESS_MS without a terminal) aside.
    const err = lines(res.stderr).filter((l) => !l.startsWith('build: '));
    const problemLines = err.filter((l) => l.includes('bad.jsonl:'));
    expect(problemLines).toHaveLength(3);
    expect(problemLines[0]).toMatch(/bad\.jsonl:2: sub_scores\.visibility: /);
    expect(problemLines[1]).toMatch(/bad\.jsonl:3: invalid JSON/);
    expect(problemLines[2]).toMatch(/bad\.jsonl:5: score: /);
    expect(err.at(-1)).toMatch(/^mvr: INVALID_AUDITS: /);
    expect(err).toHaveLength(4);
    await expectUntouched(live);
  });

  it('--json prints {ok:false, code, problems} on stdout and exits 3', async () => {
    const live = await liveCopy(base);
    const auditsDir = await auditsFolder(badFiles);
    const res = await runCli(buildArgs({ ...live.q, auditsDir }, ['--json']));
    expect(res.code, res.stderr).toBe(3);
    const body = JSON.parse(res.stdout) as { ok: boolean; code: string; problems: AuditProblem[] };
    expect(body).toMatchObject({ ok: false, code: 'INVALID_AUDITS' });
    expect(body.problems.map((pr) => [basename(pr.source), pr.member])).toEqual([
      ['bad.jsonl:2', 'sub_scores.visibility'],
      ['bad.jsonl:3', undefined],
      ['bad.jsonl:5', 'score'],
    ]);
    for (const pr of body.problems) expect(typeof pr.message).toBe('string');
    await expectUntouched(live);
  });
});
