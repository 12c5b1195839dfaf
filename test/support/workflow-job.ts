/**
 * The monthly rebuild's build job run here: its shell steps in order, in a temp copy of the
 * project, with GitHub's runner files (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, RUNNER_TEMP), its
 * `${{ }}` expressions evaluated and a stand-in `curl` (./github-runner.ts); or from a snapshot
 * of an earlier run's state before one of its steps.
 */
import { spawn } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { evaluate, FAKE_CURL, parseOutputs } from './github-runner.ts';
import { waitForClose } from './wait.ts';
import { loadWorkflow, MONTHLY, ROOT, runsCommand, type Step, type YamlMap } from './workflow.ts';

export const tempDirs: string[] = [];
export const temp = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
};

export interface JobRun {
  ok: boolean;
  /** The run's state before each step named in `JobInput.snapshotBefore` (for runs that resume there). */
  snapshots: Record<string, JobSnapshot>;
  failedStep?: string;
  ran: string[];
  log: string;
  outputs: Record<string, Record<string, string>>;
  workspace: string;
  runnerTemp: string;
  stepSummary: string;
  curlCalls: string[][];
}

export interface JobInput {
  secrets?: Record<string, string>;
  vars?: Record<string, string>;
  inputs?: Record<string, unknown>;
  routes?: Record<string, { status: number; file?: string }>;
  /** Called before each step that runs (to tamper with the workspace); a resumed run never calls it for the steps it skips. */
  before?: (stepName: string, workspace: string) => void;
  /** Step names (prefixes): keep a copy of the run's state just before each, in `JobRun.snapshots`. */
  snapshotBefore?: string[];
  /**
   * Start at a snapshot's step, in a copy of its workspace and runner folder, with the outputs of
   * the steps it ran: for a run that differs from the snapshot's only from that step on (checked:
   * every skipped step's environment must evaluate as it did there), so the job does not redo the
   * build only to reach a step that fails after it.
   */
  resume?: JobSnapshot;
}

/** A job's state just before one of its steps: its folders, the outputs and environments of the steps it ran. */
export interface JobSnapshot {
  step: number;
  workspace: string;
  runnerTemp: string;
  ran: string[];
  log: string;
  outputs: JobRun['outputs'];
  /** The environment each shell step ran with, by step index. */
  stepEnvs: Record<number, Record<string, string>>;
}

/** The checkout's sources the job uses (node_modules is linked; dist/ comes from the job's compile step, which the harness stands in for). */
export const PROJECT_PARTS = [
  'package.json',
  'tsconfig.json',
  'bin',
  'scripts',
  'core',
  'storage',
  'service',
  'access',
  'keyring',
  'builder',
  'cli',
  'gateway',
  'mcp',
  'clients',
  'audits',
];

export async function runBuildJob(input: JobInput): Promise<JobRun> {
  const job = loadWorkflow(MONTHLY).jobs.build!;
  const from = input.resume;
  const workspace = temp('mvr-ops-ws-');
  const runnerTemp = temp('mvr-ops-runner-');
  if (from) copyRun(from, { workspace, runnerTemp });
  else {
    for (const part of PROJECT_PARTS) cpSync(join(ROOT, part), join(workspace, part), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(workspace, 'node_modules'), 'dir');
    mkdirSync(join(runnerTemp, '.fake-bin'));
    writeFileSync(join(runnerTemp, '.fake-bin', 'curl'), FAKE_CURL);
    chmodSync(join(runnerTemp, '.fake-bin', 'curl'), 0o755);
    writeFileSync(join(runnerTemp, '.curl-log'), '');
    writeFileSync(join(runnerTemp, '.step-summary.md'), '');
  }
  const here = { workspace, runnerTemp };
  const fakeBin = join(runnerTemp, '.fake-bin');
  const curlLog = join(runnerTemp, '.curl-log');
  const stepSummary = join(runnerTemp, '.step-summary.md');

  const outputs: JobRun['outputs'] = from ? relocate(from.outputs, from, here) : {};
  const stepEnvs: JobSnapshot['stepEnvs'] = from ? relocate(from.stepEnvs, from, here) : {};
  const snapshots: JobRun['snapshots'] = {};
  const ctx = () => ({
    secrets: input.secrets ?? {},
    vars: input.vars ?? {},
    inputs: input.inputs ?? {},
    runner: { temp: runnerTemp },
    github: { workspace, run_id: '1', run_attempt: '1' },
    steps: Object.fromEntries(Object.entries(outputs).map(([id, o]) => [id, { outputs: o }])),
  });
  const envOf = (m: YamlMap) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, evaluate(String(v ?? ''), ctx())]));
  const stepEnv = (step: Step) => ({ ...envOf(job.env), ...envOf(step.env), FAKE_CURL_ROUTES: JSON.stringify(input.routes ?? {}) });

  let log = from?.log ?? '';
  const ran = [...(from?.ran ?? [])];
  const result = (failedStep?: string): JobRun => ({
    ok: failedStep === undefined,
    ...(failedStep !== undefined ? { failedStep } : {}),
    snapshots,
    ran,
    log,
    outputs,
    workspace,
    runnerTemp,
    stepSummary: readFileSync(stepSummary, 'utf8'),
    curlCalls: curlCalls(curlLog),
  });
  for (const step of job.steps) {
    if (step.if !== undefined) throw new Error(`harness: step "${step.name}" has an if: the harness does not evaluate those`);
    if (from && step.index < from.step) {
      // Skipped: sound only if this input would have run it exactly as the snapshot's run did.
      if (stepEnvs[step.index])
        expect(stepEnv(step), `harness: resumed past "${step.name}", which this input runs differently`).toEqual(stepEnvs[step.index]);
      continue;
    }
    if (step.uses) {
      expect(step.uses).toMatch(/^actions\/(checkout|setup-node|upload-artifact)@v\d+$/);
      continue;
    }
    if (runsCommand(step, /^npm (ci|install)\b/)) continue; // node_modules is linked from the project
    if (runsCommand(step, /^npm run build$/)) {
      cpSync(join(ROOT, 'dist'), join(workspace, 'dist'), { recursive: true }); // compiled once for the whole test run
      continue;
    }
    if (input.snapshotBefore?.some((name) => step.name.startsWith(name))) snapshots[step.name] = snapshot(step.index);
    input.before?.(step.name, workspace);
    const script = join(runnerTemp, `.step-${step.index}.sh`);
    writeFileSync(script, step.run!);
    const outputFile = join(runnerTemp, `.output-${step.index}`);
    writeFileSync(outputFile, '');
    stepEnvs[step.index] = stepEnv(step);
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
      ...stepEnvs[step.index],
    };
    ran.push(step.name);
    // As GitHub runs `shell: bash`: bash --noprofile --norc -eo pipefail {0}
    const child = spawn('bash', ['--noprofile', '--norc', '-eo', 'pipefail', script], {
      cwd: workspace,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
    const code = (await waitForClose(child, `step "${step.name}"`, () => log)).code ?? 1;
    if (step.id) outputs[step.id] = parseOutputs(outputFile);
    if (code !== 0) return result(step.name);
  }
  return result();

  function snapshot(step: number): JobSnapshot {
    const to = { workspace: temp('mvr-ops-snap-ws-'), runnerTemp: temp('mvr-ops-snap-runner-') };
    copyRun(here, to);
    return { step, ...to, ran: [...ran], log, outputs: relocate(outputs, here, to), stepEnvs: relocate(stepEnvs, here, to) };
  }
}

type Folders = Pick<JobSnapshot, 'workspace' | 'runnerTemp'>;
/** Copies a run's folders; the runner's files that name them (the build summary's paths) name the copies. */
function copyRun(from: Folders, to: Folders): void {
  cpSync(from.workspace, to.workspace, { recursive: true, verbatimSymlinks: true });
  cpSync(from.runnerTemp, to.runnerTemp, { recursive: true, verbatimSymlinks: true });
  for (const entry of readdirSync(to.runnerTemp, { withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = join(to.runnerTemp, entry.name);
    const text = readFileSync(file, 'utf8');
    if (text.includes(from.workspace) || text.includes(from.runnerTemp)) writeFileSync(file, relocate(text, from, to));
  }
}
/** A value (outputs, environments) with the paths into one run's folders moved to another's. */
const relocate = <T>(value: T, from: Folders, to: Folders): T =>
  JSON.parse(JSON.stringify(value).replaceAll(from.workspace, to.workspace).replaceAll(from.runnerTemp, to.runnerTemp)) as T;

export const curlCalls = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as string[]);

/** Every file under dir (symlinks not followed), for secret scans. */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) out.push(...filesUnder(p));
    else if (entry.isFile()) out.push(p);
  }
  return out;
}

/** Removes the temp folders the jobs made. */
export function removeJobTemps(): void {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
}
