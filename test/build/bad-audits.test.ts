/**
 * Bad audits fail the build with INVALID_AUDITS, named where they are, and publish nothing: each
 * kind of error named on its own, and every problem at once. The kinds of error share one failing
 * build, each in a folder of its own (test/support/bad-audits.ts): a build costs a worker thread.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PROBLEMS_KEPT } from '../../builder/dispatch.ts';
import { formatProblem } from '../../core/errors/errors.ts';
import { audit, jsonl } from '../support/audits.ts';
import { file, type ProblemsOf, rejected, rejectedTogether } from '../support/bad-audits.ts';
import { build, makeProject, type Project, removeTempDirs } from '../support/project.ts';

/** One bad member on line 2 of a JSONL file (lines 1 and 3 are valid): exactly one problem, naming file:2 and the member. */
const memberCases: { name: string; line: (domain: string) => Record<string, unknown>; member: string; message?: RegExp }[] = [
  { name: 'missing member', line: (d) => audit(d, { archetype: undefined }), member: 'archetype', message: /required/ },
  {
    name: 'out-of-range member',
    line: (d) => audit(d, { sub_scores: { visibility: 100.5, recommendation_rate: 2, technical_readiness: 3 } }),
    member: 'sub_scores.visibility',
  },
  { name: 'unknown member', line: (d) => audit(d, { colour: 'blue' }), member: 'colour', message: /unknown member/ },
  { name: 'bad timestamp', line: (d) => audit(d, { last_audited_at: '2026-10-15T12:00:00' }), member: 'last_audited_at' },
  { name: 'bad domain', line: () => audit('localhost'), member: 'domain' },
  { name: 'score null with ok evidence', line: (d) => audit(d, { score: null }), member: 'score', message: /null/ },
];
const slug = (name: string) => name.replaceAll(' ', '-');

/** The 14 lines of `more.jsonl`: one bad member a line, and the member each names. */
const moreCases: [Record<string, unknown>, string][] = [
  [audit('v1.example', { sub_scores: { visibility: 1, recommendation_rate: 2 } }), 'sub_scores.technical_readiness'],
  [
    audit('v2.example', { sub_scores: { visibility: 1, recommendation_rate: -1, technical_readiness: 3 } }),
    'sub_scores.recommendation_rate',
  ],
  [audit('v3.example', { score: 101 }), 'score'],
  [audit('v4.example', { evidence: { ok: true, coverage: 1.2, site_coverage: 0.5, engines_ran: ['chatgpt'] } }), 'evidence.coverage'],
  [audit('v5.example', { flags: 'thin_evidence' }), 'flags'],
  [
    audit('v6.example', { evidence: { ok: true, coverage: 1, site_coverage: 0.5, engines_ran: ['chatgpt'], notes: 'x' } }),
    'evidence.notes',
  ],
  [audit('v7.example', { last_audited_at: '15/10/2026 12:00' }), 'last_audited_at'],
  [audit('v8.example', { first_seen: '2026-02-30T00:00:00Z' }), 'first_seen'],
  [audit('v9.example', { first_seen: '2026-10-15T00:00:00Z' }), 'first_seen'],
  [audit('co.uk'), 'domain'],
  [audit('192.0.2.1'), 'domain'],
  [audit('  '), 'domain'],
  [audit('x', { domain: 42 }), 'domain'],
  [audit('v14.example', { archetype: '   ' }), 'archetype'],
];

/** Every case of the one failing build, by folder; valid audits have domains of their own. */
const CASES: Record<string, Record<string, string>> = {
  'invalid-json-line': {
    'bad.jsonl': jsonl(audit('line-one.example'), '{"domain": "line-two.example", "score": ', audit('line-three.example')),
  },
  'json-not-json': { 'bad.json': '{\n  "domain": "broken.example",\n  "score": 80,,\n}\n' },
  'not-an-object': {
    'bad.jsonl': jsonl(audit('fine-one.example'), '["not", "an", "audit"]', '42'),
    'arr.json': JSON.stringify([audit('fine-two.example'), null]),
    'str.json': '"just a string"',
  },
  ...Object.fromEntries(
    memberCases.map(({ name, line }) => [
      slug(name),
      { 'bad.jsonl': jsonl(audit(`${slug(name)}-1.example`), line(`${slug(name)}-2.example`), audit(`${slug(name)}-3.example`)) },
    ]),
  ),
  'more-members': { 'more.jsonl': jsonl(...moreCases.map(([a]) => a)) },
  'json-array-member': {
    'arr.json': JSON.stringify(
      [audit('ok-a.example'), audit('bad-b.example', { sub_scores: { visibility: 101, recommendation_rate: 1, technical_readiness: 1 } })],
      null,
      2,
    ),
  },
  crlf: {
    'crlf.jsonl': `${[JSON.stringify(audit('crlf-1.example')), '', '   ', JSON.stringify(audit('crlf-4.example', { score: -1 })), JSON.stringify(audit('crlf-5.example'))].join('\r\n')}\r\n`,
  },
};

/** A project with a good build (a copy of the plain one); each failing build copies it. */
let base: Project;
beforeAll(async () => {
  base = await makeProject();
});
afterAll(removeTempDirs);

/** The one failing build of every case in CASES, started by the first test that needs it. */
let together: Promise<ProblemsOf> | undefined;
const problemsOf = async (name: string) => (await (together ??= rejectedTogether(base, CASES)))(name);

describe.concurrent('bad audits: each kind of error, named where it is', () => {
  it('score null is accepted when evidence is thin or the audit is flagged', async () => {
    // Control case for 'score null with ok evidence': the same audits with thin evidence / flagged build fine (in a
    // separate project). First, so that its build starts beside the failing one.
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

  it('a line of invalid JSON in a JSONL file is named by file:line', async () => {
    const problems = await problemsOf('invalid-json-line');
    expect(problems).toHaveLength(1);
    expect(file(problems[0]!)).toBe('bad.jsonl:2');
    expect(problems[0]!.message).toMatch(/invalid JSON/);
  });

  it('a .json file that is not JSON is named by file', async () => {
    const problems = await problemsOf('json-not-json');
    expect(problems).toHaveLength(1);
    expect(file(problems[0]!)).toMatch(/^bad\.json(:\d+:\d+)?$/);
    expect(problems[0]!.message).toMatch(/invalid JSON/);
  });

  it('an audit that is not an object (JSONL line, array element, whole file)', async () => {
    const problems = await problemsOf('not-an-object');
    expect(problems.map(file).sort()).toEqual(['arr.json[1]', 'bad.jsonl:2', 'bad.jsonl:3', 'str.json']);
    for (const problem of problems) expect(problem.message).toMatch(/object/);
  });

  it.each(memberCases)('$name -> member $member', async ({ name, member, message }) => {
    const problems = await problemsOf(slug(name));
    expect(problems, JSON.stringify(problems)).toHaveLength(1);
    const problem = problems[0]!;
    expect(file(problem)).toBe('bad.jsonl:2');
    expect(problem.member).toBe(member);
    if (message) expect(problem.message).toMatch(message);
    expect(formatProblem(problem)).toBe(`${problem.source}: ${member}: ${problem.message}`);
  });

  it('more bad members, one per line, each named by its line and member', async () => {
    const got = (await problemsOf('more-members')).map((pr) => [file(pr), pr.member]);
    expect(got).toEqual(moreCases.map(([, member], i) => [`more.jsonl:${i + 1}`, member]));
  });

  it('a bad member in a .json array is named by file[index] and member', async () => {
    const problems = await problemsOf('json-array-member');
    expect(problems).toHaveLength(1);
    expect(file(problems[0]!)).toBe('arr.json[1]');
    expect(problems[0]!.member).toBe('sub_scores.visibility');
  });

  it('counts JSONL lines with CRLF endings and blank lines', async () => {
    expect((await problemsOf('crlf')).map((pr) => [file(pr), pr.member])).toEqual([['crlf.jsonl:4', 'score']]);
  });
});

/** Every bad line of three files, in one build across two workers, one line a batch (each run its own batch). */
const EVERY_PROBLEM = {
  'bad.jsonl': jsonl(
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
  ),
  // Lines ended by a CR on its own.
  'cr.jsonl': `${[JSON.stringify(audit('cr-1.example')), '', JSON.stringify(audit('cr-3.example', { score: -1 })), JSON.stringify(audit('cr-4.example'))].join('\r')}\r${JSON.stringify(audit('cr-5.example', { score: 101 }))}`,
  'zz.json': '{ not json',
};
let everyProblem: ReturnType<typeof rejected> | undefined;
const everyProblemBuild = () => (everyProblem ??= rejected(base, EVERY_PROBLEM, { workers: 2, batchSize: 1 }));

describe.concurrent('bad audits: every problem at once', () => {
  it('reports every bad line of every file, in input order, across workers', async () => {
    const error = await everyProblemBuild();
    expect(error.total).toBe(9);
    expect(error.problems).toHaveLength(9);
    const where = error.problems.map((pr) => `${file(pr)} ${pr.member ?? ''}`.trim());
    expect([...where].sort()).toEqual(
      [
        'bad.jsonl:2',
        'bad.jsonl:4 score',
        'bad.jsonl:5 archetype',
        'bad.jsonl:5 colour',
        'bad.jsonl:10 domain',
        'bad.jsonl:12 last_audited_at',
        'cr.jsonl:3 score',
        'cr.jsonl:5 score',
        'zz.json:1:3',
      ].sort(),
    );
    // Reported in input order: line numbers ascend numerically (10 after 5, not after 1).
    const jsonlLines = error.problems
      .map(file)
      .filter((f) => f.startsWith('bad.jsonl:'))
      .map((f) => Number(f.split(':')[1]));
    expect(jsonlLines).toEqual([2, 4, 5, 5, 10, 12]);
    expect(error.message).toMatch(/9 problems/);
  });

  it(`keeps the first ${MAX_PROBLEMS_KEPT} problems and counts the rest`, async () => {
    const count = MAX_PROBLEMS_KEPT + 5;
    const bad = jsonl(...Array.from({ length: count }, (_, i) => audit(`many-${i}.example`, { score: 200 })));
    const error = await rejected(base, { 'many.jsonl': bad });
    expect(error.total).toBe(count);
    expect(error.byKind).toEqual({ schema: count });
    expect(error.problems).toHaveLength(MAX_PROBLEMS_KEPT);
    expect(error.problems.map(file)).toEqual(Array.from({ length: MAX_PROBLEMS_KEPT }, (_, i) => `many.jsonl:${i + 1}`));
    expect(error.message).toMatch(new RegExp(`${count} problems`));
  });

  it('counts lines ended by a CR on its own as readline does, in runs of one line (each run its own batch)', async () => {
    const error = await everyProblemBuild();
    const cr = error.problems.filter((pr) => file(pr).startsWith('cr.jsonl:'));
    expect(cr.map((pr) => [file(pr), pr.member])).toEqual([
      ['cr.jsonl:3', 'score'],
      ['cr.jsonl:5', 'score'],
    ]);
  });
});
