import { basename } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatProblem, InvalidAuditsError, type AuditProblem } from '@merchant-verify/verifier/errors';
import { audit, jsonl } from '../support/audits.ts';
import { buildArgs, lines, runCli } from '../support/cli.ts';
import { currentTarget, readCurrentRecords, snapshotOutputs } from '../support/outputs.ts';
import { auditsFolder, build, buildFails, cloneProject, makeProject, type Project, removeTempDirs } from '../support/project.ts';

/**
 * Every case runs against its own copy of a project that already has a good build: a bad audit
 * must fail the build with INVALID_AUDITS, name where it is, and leave records/ and public/ (and
 * where records/current points) exactly as they were. Copies let the cases run side by side.
 */
let base: Project;

beforeAll(async () => {
  base = await makeProject({ samples: true, sign: true, build: false });
  await build(base);
});
afterAll(removeTempDirs);

interface Live {
  q: Project;
  before: Awaited<ReturnType<typeof snapshotOutputs>>;
  target: string;
}

async function liveCopy(): Promise<Live> {
  const q = await cloneProject(base);
  return { q, before: await snapshotOutputs(q), target: await currentTarget(q.recordsDir) };
}

async function expectUntouched({ q, before, target }: Live): Promise<void> {
  expect(await currentTarget(q.recordsDir)).toBe(target);
  const after = await snapshotOutputs(q);
  expect(after.records).toEqual(before.records);
  expect(after.public).toEqual(before.public);
  // 33 records, the manifest, the build statement, and the list of kept builds.
  expect(Object.keys(after.records).filter((n) => n.endsWith('.json')).length).toBe(36);
}

/** Builds the sample audits plus `files` into a live copy; expects INVALID_AUDITS and untouched outputs. */
async function rejected(files: Record<string, string>, opts: { workers?: number; batchSize?: number } = {}): Promise<InvalidAuditsError & { live: Live }> {
  const live = await liveCopy();
  const auditsDir = await auditsFolder(files);
  const error = await buildFails(live.q, { auditsDir, workers: opts.workers ?? 1, ...(opts.batchSize ? { batchSize: opts.batchSize } : {}) });
  expect(error.code).toBe('INVALID_AUDITS');
  expect(error).toBeInstanceOf(InvalidAuditsError);
  await expectUntouched(live);
  return Object.assign(error as InvalidAuditsError, { live });
}

const file = (problem: AuditProblem) => basename(problem.source);

describe.concurrent('bad audits: one kind of error at a time', () => {
  it('a line of invalid JSON in a JSONL file is named by file:line', async () => {
    const error = await rejected({
      'bad.jsonl': jsonl(audit('line-one.example'), '{"domain": "line-two.example", "score": ', audit('line-three.example')),
    });
    expect(error.problems).toHaveLength(1);
    expect(file(error.problems[0]!)).toBe('bad.jsonl:2');
    expect(error.problems[0]!.message).toMatch(/invalid JSON/);
  });

  it('a .json file that is not JSON is named by file', async () => {
    const error = await rejected({ 'bad.json': '{\n  "domain": "broken.example",\n  "score": 80,,\n}\n' });
    expect(error.problems).toHaveLength(1);
    expect(file(error.problems[0]!)).toMatch(/^bad\.json(:\d+:\d+)?$/);
    expect(error.problems[0]!.message).toMatch(/invalid JSON/);
  });

  it('an audit that is not an object (JSONL line, array element, whole file)', async () => {
    const error = await rejected({
      'bad.jsonl': jsonl(audit('fine-one.example'), '["not", "an", "audit"]', '42'),
      'arr.json': JSON.stringify([audit('fine-two.example'), null]),
      'str.json': '"just a string"',
    });
    expect(error.problems.map(file).sort()).toEqual(['arr.json[1]', 'bad.jsonl:2', 'bad.jsonl:3', 'str.json']);
    for (const problem of error.problems) expect(problem.message).toMatch(/object/);
  });

  // One bad member on line 2 of a JSONL file (lines 1 and 3 are valid): exactly one problem, naming file:2 and the member.
  const memberCases: { name: string; line: Record<string, unknown>; member: string; message?: RegExp }[] = [
    { name: 'missing member', line: audit('m.example', { archetype: undefined }), member: 'archetype', message: /required/ },
    {
      name: 'out-of-range member',
      line: audit('m.example', { sub_scores: { visibility: 100.5, recommendation_rate: 2, technical_readiness: 3 } }),
      member: 'sub_scores.visibility',
    },
    { name: 'unknown member', line: audit('m.example', { colour: 'blue' }), member: 'colour', message: /unknown member/ },
    { name: 'bad timestamp', line: audit('m.example', { last_audited_at: '2026-10-15T12:00:00' }), member: 'last_audited_at' },
    { name: 'bad domain', line: audit('localhost'), member: 'domain' },
    { name: 'score null with ok evidence', line: audit('m.example', { score: null }), member: 'score', message: /null/ },
  ];

  it.each(memberCases)('$name -> member $member', async ({ line, member, message }) => {
    const error = await rejected({ 'bad.jsonl': jsonl(audit('line-one.example'), line, audit('line-three.example')) });
    expect(error.problems, JSON.stringify(error.problems)).toHaveLength(1);
    const problem = error.problems[0]!;
    expect(file(problem)).toBe('bad.jsonl:2');
    expect(problem.member).toBe(member);
    if (message) expect(problem.message).toMatch(message);
    expect(formatProblem(problem)).toBe(`${problem.source}: ${member}: ${problem.message}`);
  });

  it('more bad members, one per line, each named by its line and member', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [audit('v1.example', { sub_scores: { visibility: 1, recommendation_rate: 2 } }), 'sub_scores.technical_readiness'],
      [audit('v2.example', { sub_scores: { visibility: 1, recommendation_rate: -1, technical_readiness: 3 } }), 'sub_scores.recommendation_rate'],
      [audit('v3.example', { score: 101 }), 'score'],
      [audit('v4.example', { evidence: { ok: true, coverage: 1.2, site_coverage: 0.5, engines_ran: ['chatgpt'] } }), 'evidence.coverage'],
      [audit('v5.example', { flags: 'thin_evidence' }), 'flags'],
      [audit('v6.example', { evidence: { ok: true, coverage: 1, site_coverage: 0.5, engines_ran: ['chatgpt'], notes: 'x' } }), 'evidence.notes'],
      [audit('v7.example', { last_audited_at: '15/10/2026 12:00' }), 'last_audited_at'],
      [audit('v8.example', { first_seen: '2026-02-30T00:00:00Z' }), 'first_seen'],
      [audit('v9.example', { first_seen: '2026-12-01T00:00:00Z' }), 'first_seen'],
      [audit('co.uk'), 'domain'],
      [audit('192.0.2.1'), 'domain'],
      [audit('  '), 'domain'],
      [audit('x', { domain: 42 }), 'domain'],
      [audit('v14.example', { archetype: '   ' }), 'archetype'],
    ];
    const error = await rejected({ 'more.jsonl': jsonl(...cases.map(([a]) => a)) });
    const got = error.problems.map((pr) => [file(pr), pr.member]);
    expect(got).toEqual(cases.map(([, member], i) => [`more.jsonl:${i + 1}`, member]));
  });

  it('a bad member in a .json array is named by file[index] and member', async () => {
    const error = await rejected({
      'arr.json': JSON.stringify([audit('ok-a.example'), audit('bad-b.example', { sub_scores: { visibility: 101, recommendation_rate: 1, technical_readiness: 1 } })], null, 2),
    });
    expect(error.problems).toHaveLength(1);
    expect(file(error.problems[0]!)).toBe('arr.json[1]');
    expect(error.problems[0]!.member).toBe('sub_scores.visibility');
  });

  it('score null is accepted when evidence is thin or the audit is flagged', async () => {
    // Control case for the rule above: the same audits with thin evidence / flagged build fine (in a separate project).
    const q = await makeProject({
      samples: false,
      files: {
        'ok.jsonl': jsonl(
          audit('thin.example', { score: null, evidence: { ok: false, coverage: 0.1, site_coverage: 0.1, engines_ran: ['chatgpt'] } }),
          audit('flagged.example', { score: null, flagged: true }),
        ),
      },
    });
    const summary = await build(q, { workers: 1 });
    expect(summary.byStatus).toEqual({ flagged: 1, provisional: 1 });
    expect(summary.byTier).toEqual({ none: 2 });
  });
});

describe.concurrent('bad audits: every problem at once', () => {
  it('reports every bad line of every file, in input order, across workers', async () => {
    const bad = jsonl(
      audit('all-1.example'),
      '{"domain": "all-2.example",',
      audit('all-3.example'),
      audit('all-4.example', { score: 140 }),
      audit('all-5.example', { colour: 'red', archetype: undefined }),
      audit('all-6.example'),
      audit('all-7.example'),
      audit('all-8.example'),
      audit('all-9.example'),
      audit('localhost'),
      audit('all-11.example'),
      audit('all-12.example', { last_audited_at: 'yesterday' }),
    );
    const error = await rejected({ 'bad.jsonl': bad, 'zz.json': '{ not json' }, { workers: 2, batchSize: 1 });
    expect(error.total).toBe(7);
    expect(error.problems).toHaveLength(7);
    const where = error.problems.map((pr) => `${file(pr)} ${pr.member ?? ''}`.trim());
    expect([...where].sort()).toEqual(
      ['bad.jsonl:2', 'bad.jsonl:4 score', 'bad.jsonl:5 archetype', 'bad.jsonl:5 colour', 'bad.jsonl:10 domain', 'bad.jsonl:12 last_audited_at', 'zz.json:1:3'].sort(),
    );
    // Reported in input order: line numbers ascend numerically (10 after 5, not after 1).
    const jsonlLines = error.problems.map(file).filter((f) => f.startsWith('bad.jsonl:')).map((f) => Number(f.split(':')[1]));
    expect(jsonlLines).toEqual([2, 4, 5, 5, 10, 12]);
    expect(error.message).toMatch(/7 problems/);
  });

  it('keeps the first 1000 problems and counts the rest', async () => {
    const bad = jsonl(...Array.from({ length: 1005 }, (_, i) => audit(`many-${i}.example`, { score: 200 })));
    const error = await rejected({ 'many.jsonl': bad });
    expect(error.total).toBe(1005);
    expect(error.problems).toHaveLength(1000);
    expect(error.problems.map(file)).toEqual(Array.from({ length: 1000 }, (_, i) => `many.jsonl:${i + 1}`));
    expect(error.message).toMatch(/1005 problems/);
  });

  it('counts JSONL lines with CRLF endings and blank lines', async () => {
    const text = [JSON.stringify(audit('crlf-1.example')), '', '   ', JSON.stringify(audit('crlf-4.example', { score: -1 })), JSON.stringify(audit('crlf-5.example'))].join('\r\n');
    const error = await rejected({ 'crlf.jsonl': `${text}\r\n` });
    expect(error.problems.map((pr) => [file(pr), pr.member])).toEqual([['crlf.jsonl:4', 'score']]);
  });

  it('counts lines ended by a CR on its own as readline does, in runs of one line (each run its own batch)', async () => {
    const text = [JSON.stringify(audit('cr-1.example')), '', JSON.stringify(audit('cr-3.example', { score: -1 })), JSON.stringify(audit('cr-4.example'))].join('\r');
    const error = await rejected({ 'cr.jsonl': `${text}\r${JSON.stringify(audit('cr-5.example', { score: 101 }))}` }, { workers: 2, batchSize: 1 });
    expect(error.problems.map((pr) => [file(pr), pr.member])).toEqual([['cr.jsonl:3', 'score'], ['cr.jsonl:5', 'score']]);
  });
});

describe.concurrent('duplicate domains after normalization', () => {
  it('two spellings of one domain in two files: one problem naming both sources, nothing published', async () => {
    const error = await rejected({
      'a.jsonl': jsonl(audit('Shop.Example.com')),
      'b.json': JSON.stringify(audit('https://www.shop.example.com/x')),
    });
    expect(error.problems).toHaveLength(1);
    const problem = error.problems[0]!;
    expect(problem.member).toBe('domain');
    const text = formatProblem(problem);
    expect(text).toMatch(/duplicate/);
    expect(text).toContain('"example.com"');
    expect(text).toMatch(/a\.jsonl:1\b/);
    expect(text).toMatch(/b\.json\b/);
    const live = await readCurrentRecords(error.live.q.recordsDir);
    expect(live.has('example.com')).toBe(false);
    expect(live.size).toBe(33);
  });

  it('a sample domain audited again under another spelling, three times, across workers', async () => {
    const error = await rejected(
      { 'again.jsonl': jsonl(audit('WWW.ACME-OUTDOOR.example'), audit('x1.example'), audit('https://acme-outdoor.example./')) },
      { workers: 2, batchSize: 1 },
    );
    expect(error.problems).toHaveLength(1);
    const text = formatProblem(error.problems[0]!);
    expect(text).toContain('"acme-outdoor.example"');
    expect(text).toMatch(/verified\.jsonl:1\b/);
    expect(text).toMatch(/again\.jsonl:1\b/);
    expect(text).toMatch(/again\.jsonl:3\b/);
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
    const live = await liveCopy();
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
    const live = await liveCopy();
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
