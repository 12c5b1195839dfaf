/**
 * Shared set-up for the end-to-end build tests: temp projects (audits copied, keys made), the
 * real build (runBuild, real worker threads) and the real CLI (bin/mvr.js in a child process),
 * plus readers for what a build leaves on disk.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cp, mkdir, mkdtemp, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runBuild, type BuildOptions, type BuildSummary } from '../../builder/build.ts';
import { keygen } from '../../service/signing-keys.ts';
import { KEY_SET_PATH, parseKeySet, type KeySet } from '../../core/keyset.ts';
import { CURRENT_LINK, MANIFEST_FILE } from '../../core/layout.ts';
import { defaultSchemaUrl } from '../../core/record.ts';
import { MvrError } from '../../core/errors.ts';

/** The project root (/work/main): the CLI runs with this as its working directory. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const SAMPLE_AUDITS = join(ROOT, 'audits');
export const ISSUER = 'merchant-verify.example';
export const SCHEMA_URL = defaultSchemaUrl(ISSUER);
export const NOW_ISO = '2026-11-01T00:00:00.000Z';
export const NOW = Date.parse(NOW_ISO);

export interface Project {
  root: string;
  auditsDir: string;
  recordsDir: string;
  publicDir: string;
  keysDir: string;
  keySetFile: string;
  /** kid made by keygen at set-up, or null for a project without a key. */
  kid: string | null;
}

const made: string[] = [];

/** A fresh folder under the OS temp folder, removed by {@link removeTempDirs}. */
export async function tempDir(prefix = 'mvr-build-test-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** Removes every folder made by {@link tempDir} in this test file (use in afterAll). */
export async function removeTempDirs(): Promise<void> {
  await Promise.all(made.splice(0).map((d) => rm(d, { recursive: true, force: true })));
}

/**
 * A temp project: `audits/` (a copy of the sample audits unless `samples: false`, plus `files`),
 * empty `records/` and `public/` locations, and `keys/` with one active key when `keygen` is set.
 */
export async function makeProject(opts: { samples?: boolean; keygen?: boolean; files?: Record<string, string> } = {}): Promise<Project> {
  const root = await tempDir();
  const p: Project = {
    root,
    auditsDir: join(root, 'audits'),
    recordsDir: join(root, 'records'),
    publicDir: join(root, 'public'),
    keysDir: join(root, 'keys'),
    keySetFile: join(root, 'public', KEY_SET_PATH),
    kid: null,
  };
  await mkdir(p.auditsDir, { recursive: true });
  if (opts.samples !== false) await cp(SAMPLE_AUDITS, p.auditsDir, { recursive: true });
  if (opts.files) await writeFiles(p.auditsDir, opts.files);
  if (opts.keygen) p.kid = await keygen(p.keysDir);
  return p;
}

/**
 * A copy of a built project's outputs (records/ with its relative `current` link, and public/),
 * sharing its audits and keys: lets tests that must start from a live build run side by side.
 */
export async function cloneProject(p: Project): Promise<Project> {
  const root = await tempDir('mvr-clone-');
  const q: Project = { ...p, root, recordsDir: join(root, 'records'), publicDir: join(root, 'public'), keySetFile: join(root, 'public', KEY_SET_PATH) };
  await cp(p.recordsDir, q.recordsDir, { recursive: true, verbatimSymlinks: true });
  await cp(p.publicDir, q.publicDir, { recursive: true, verbatimSymlinks: true });
  return q;
}

/** A fresh audits folder: the sample audits (unless `samples: false`) plus `files`. */
export async function auditsFolder(files: Record<string, string>, samples = true): Promise<string> {
  const dir = await tempDir('mvr-audits-');
  if (samples) await cp(SAMPLE_AUDITS, dir, { recursive: true });
  await writeFiles(dir, files);
  return dir;
}

export async function writeFiles(dir: string, files: Record<string, string>): Promise<void> {
  for (const [name, text] of Object.entries(files)) {
    const file = join(dir, name);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, text);
  }
}

/**
 * runBuild's options for a project: fixed issuer and --now, one worker thread (each thread costs a
 * TypeScript loader start-up; tests about scheduling pass `workers: 2` with small batches).
 */
export function buildOptions(p: Project, overrides: Partial<BuildOptions> = {}): BuildOptions {
  return {
    auditsDir: p.auditsDir,
    recordsDir: p.recordsDir,
    publicDir: p.publicDir,
    keysDir: p.keysDir,
    issuer: ISSUER,
    schemaUrl: SCHEMA_URL,
    now: NOW,
    signingKey: undefined,
    workers: 1,
    ...overrides,
  };
}

export function build(p: Project, overrides: Partial<BuildOptions> = {}): Promise<BuildSummary> {
  return runBuild(buildOptions(p, overrides));
}

/** Runs a build that must fail; returns the error (an MvrError). */
export async function buildFails(p: Project, overrides: Partial<BuildOptions> = {}): Promise<MvrError> {
  const outcome = await build(p, overrides).then(
    (summary) => ({ ok: true as const, summary }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  if (outcome.ok) throw new Error(`expected the build to fail, but it published ${outcome.summary.records} records`);
  if (!(outcome.error instanceof MvrError)) throw outcome.error;
  return outcome.error;
}

// ---------------------------------------------------------------------------------------------
// The CLI

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * The environment of a CLI child: this process's, minus anything that would change the build
 * (MVR_*, SOURCE_DATE_EPOCH, NODE_OPTIONS), plus `extra` (an undefined value removes a name).
 */
export function cliEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) {
    if (name.startsWith('MVR_') || name === 'SOURCE_DATE_EPOCH' || name === 'NODE_OPTIONS') delete env[name];
  }
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

/** Starts `node bin/mvr.js ...args` in the project root; `onSpawn` gets the child (to kill it). */
export function runCli(
  args: string[],
  env: Record<string, string | undefined> = {},
  onSpawn?: (child: ReturnType<typeof spawn>) => void,
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/mvr.js', ...args], { cwd: ROOT, env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '', stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    onSpawn?.(child);
  });
}

/** `build` flags for a project (folders and --now), plus `extra`. */
export function buildArgs(p: Project, extra: string[] = [], now: string | null = NOW_ISO): string[] {
  const args = ['build', '--audits', p.auditsDir, '--records', p.recordsDir, '--public', p.publicDir, '--keys', p.keysDir];
  if (now !== null) args.push('--now', now);
  return [...args, ...extra];
}

/** Lines of a text, without the empty last one. */
export function lines(text: string): string[] {
  return text.split('\n').filter((l) => l !== '');
}

// ---------------------------------------------------------------------------------------------
// What a build leaves on disk

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Every entry under a folder (without following symlinks): `dir`, `link:<target>` or
 * `file:<sha256>`, keyed by relative path. Equal snapshots mean nothing was added, removed,
 * repointed or rewritten. A missing folder gives `{}`.
 */
export async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (abs: string, rel: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(abs, { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const a = join(abs, e.name), r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isSymbolicLink()) out[r] = `link:${await readlink(a)}`;
      else if (e.isDirectory()) {
        out[r] = 'dir';
        await walk(a, r);
      } else out[r] = `file:${sha256(await readFile(a))}`;
    }
  };
  await walk(dir, '');
  return out;
}

/** Snapshots of a project's records/ and public/ folders. */
export async function snapshotOutputs(p: { recordsDir: string; publicDir: string }): Promise<{ records: Record<string, string>; public: Record<string, string> }> {
  return { records: await snapshot(p.recordsDir), public: await snapshot(p.publicDir) };
}

/**
 * Every file under a folder, relative path -> absolute path. The folder itself may be a symlink
 * (records/current); symlinks inside it are skipped (records/current when listing records/).
 */
export async function listFiles(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (abs: string, rel: string): Promise<void> => {
    for (const e of await readdir(abs, { withFileTypes: true })) {
      const a = join(abs, e.name), r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isSymbolicLink()) continue;
      if (e.isDirectory()) await walk(a, r);
      else out.set(r, a);
    }
  };
  await walk(dir, '');
  return out;
}

export interface RecordFile {
  /** Path relative to records/current, e.g. `ab/example.com.json`. */
  rel: string;
  text: string;
  record: Record<string, unknown>;
}

/** The live build's record files (`ab/<domain>.json`; not the manifest, index or change feed), by the domain in each record. */
export async function readCurrentRecords(recordsDir: string): Promise<Map<string, RecordFile>> {
  const out = new Map<string, RecordFile>();
  for (const [rel, abs] of await listFiles(join(recordsDir, CURRENT_LINK))) {
    if (!/^[0-9a-f]{2}\/[^/]+\.json$/.test(rel)) continue;
    const text = await readFile(abs, 'utf8');
    const record = JSON.parse(text) as Record<string, unknown>;
    out.set(String(record.domain), { rel, text, record });
  }
  return out;
}

/** The live build's files (records and manifest) as text, by path relative to records/current. */
export async function readCurrentFiles(recordsDir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const [rel, abs] of await listFiles(join(recordsDir, CURRENT_LINK))) out.set(rel, await readFile(abs, 'utf8'));
  return out;
}

/** The published key set: its text and its parsed (and checked) form. */
export async function readKeySet(publicDir: string): Promise<{ text: string; keySet: KeySet }> {
  const text = await readFile(join(publicDir, KEY_SET_PATH), 'utf8');
  return { text, keySet: parseKeySet(JSON.parse(text)) };
}

/** Where records/current points (relative link text). */
export function currentTarget(recordsDir: string): Promise<string> {
  return readlink(join(recordsDir, CURRENT_LINK));
}

// ---------------------------------------------------------------------------------------------
// Audits

/** A valid audit for `domain`; `patch` members replace the defaults (undefined removes one). */
export function audit(domain: string, patch: Record<string, unknown> = {}): Record<string, unknown> {
  const base: Record<string, unknown> = {
    domain,
    score: 70,
    sub_scores: { visibility: 70, recommendation_rate: 71, technical_readiness: 72 },
    flags: [],
    evidence: { ok: true, coverage: 0.9, site_coverage: 0.8, engines_ran: ['chatgpt', 'claude'], engines_skipped: [], blockers: [] },
    archetype: 'retailer',
    first_seen: '2025-01-01T00:00:00Z',
    last_audited_at: '2026-10-01T00:00:00Z',
  };
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) delete base[k];
    else base[k] = v;
  }
  return base;
}

/** JSONL text: objects are JSON-encoded, strings are written as the raw line. */
export function jsonl(...items: (Record<string, unknown> | string)[]): string {
  return items.map((i) => (typeof i === 'string' ? i : JSON.stringify(i))).join('\n') + '\n';
}

/** The sample audits, read independently of the build: source and raw `domain` of each. */
export async function sampleAudits(): Promise<{ source: string; domain: string; value: Record<string, unknown> }[]> {
  const out: { source: string; domain: string; value: Record<string, unknown> }[] = [];
  for (const [rel, abs] of await listFiles(SAMPLE_AUDITS)) {
    const text = await readFile(abs, 'utf8');
    const values: unknown[] = rel.endsWith('.jsonl')
      ? lines(text).filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as unknown)
      : rel.endsWith('.json')
        ? ([] as unknown[]).concat(JSON.parse(text) as unknown)
        : [];
    for (const v of values) {
      const value = v as Record<string, unknown>;
      out.push({ source: rel, domain: String(value.domain), value });
    }
  }
  return out;
}
