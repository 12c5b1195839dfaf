/**
 * Temp projects for every suite: a copy of the sample audits, a signing key made by the real
 * `keygen`, one real `runBuild` with the issuer and `--now` fixed (or a copy of such a project),
 * and the temp folders they live in (removed by {@link removeTempDirs}, or by `cleanup()` of
 * ./gateway.ts).
 * Nothing is mocked: records are real files and signatures are real.
 */
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KEY_SET_PATH } from '@merchant-verify/verifier';
import { inject } from 'vitest';
import { type BuildOptions, type BuildSummary, runBuild } from '../../builder/build.ts';
import { MvrError } from '../../core/errors/errors.ts';
import { CURRENT_LINK, recordPath } from '../../core/layout.ts';
import { defaultSchemaUrl } from '../../core/rules/record.ts';
import { activeKid, keygen } from '../../keyring/signing-keys.ts';

/** The project root: the CLI runs with this as its working directory. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const SAMPLE_AUDITS = join(ROOT, 'audits');
export const ISSUER = 'merchant-verify.example';
export const SCHEMA_URL = defaultSchemaUrl(ISSUER);
/** Every test build's issued_at (`--now`). */
export const NOW_ISO = '2026-11-01T00:00:00.000Z';
export const NOW = Date.parse(NOW_ISO);
/** A sample domain with a gold, verified record (last audited 2026-10-15T12:00Z). */
export const GOLD = 'acme-outdoor.example';
/** A valid domain that no sample audits. */
export const UNAUDITED = 'never-audited-shop.example';

export interface Project {
  root: string;
  auditsDir: string;
  recordsDir: string;
  publicDir: string;
  keysDir: string;
  apiKeysFile: string;
  keySetFile: string;
  /** The kid made at set-up (null when unsigned). */
  kid: string | null;
}

const made: string[] = [];

/** A fresh folder under the OS temp folder, removed by {@link removeTempDirs}. */
export async function tempDir(prefix = 'mvr-test-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** Removes every folder made by {@link tempDir} (and so every project) in this test file. */
export async function removeTempDirs(): Promise<void> {
  await Promise.all(made.splice(0).map((d) => rm(d, { recursive: true, force: true })));
}

export interface ProjectOptions {
  /** Copy the sample audits into audits/ (default true). */
  samples?: boolean;
  /** Make a signing key with the real keygen (default true). */
  sign?: boolean;
  /** Build the audits once, with the fixed issuer and `--now` (default true). */
  build?: boolean;
  /** More audit files, by path relative to audits/. */
  files?: Record<string, string>;
}

/** A temp project: audits (samples and `files`), a signing key and one build, unless told otherwise. */
export async function makeProject(opts: ProjectOptions = {}): Promise<Project> {
  const plain = opts.samples !== false && opts.sign !== false && opts.build !== false && opts.files === undefined;
  return plain ? copyOfPlain() : freshProject(await tempDir('mvr-project-'), opts);
}

/** A project made from nothing in `root` (the global set-up makes the plain one with it). */
export async function freshProject(root: string, opts: ProjectOptions): Promise<Project> {
  const p = projectAt(root);
  await mkdir(p.auditsDir, { recursive: true });
  await mkdir(p.keysDir, { recursive: true });
  if (opts.samples !== false) await cp(SAMPLE_AUDITS, p.auditsDir, { recursive: true });
  if (opts.files) await writeFiles(p.auditsDir, opts.files);
  if (opts.sign !== false) p.kid = await keygen(p.keysDir);
  if (opts.build !== false) await build(p);
  return p;
}

function projectAt(root: string): Project {
  return {
    root,
    auditsDir: join(root, 'audits'),
    recordsDir: join(root, 'records'),
    publicDir: join(root, 'public'),
    keysDir: join(root, 'keys'),
    apiKeysFile: join(root, 'keys', 'api-keys.json'),
    keySetFile: join(root, 'public', KEY_SET_PATH),
    kid: null,
  };
}

/**
 * A copy of the plain project that Vitest's global set-up built once for the run
 * (./plain-project.ts). Every copy has the plain project's key and build id: a test that needs two
 * different keys or builds makes them itself (`makeProject({ build: false })`, then `build`).
 */
async function copyOfPlain(): Promise<Project> {
  const from = projectAt(inject('plainProject'));
  return { ...(await copyProject(from)), kid: await activeKid(from.keysDir) };
}

/**
 * A copy of a project that shares nothing it writes: its audits, records, public files and keys
 * (the API keys file a gateway adds to, a key a test removes). A build costs about a second of
 * CPU, a copy a few milliseconds, so a file builds its starting point once and copies it per test.
 */
export async function copyProject(from: Project): Promise<Project> {
  const p = { ...projectAt(await tempDir('mvr-project-')), kid: from.kid };
  for (const dir of ['auditsDir', 'recordsDir', 'publicDir', 'keysDir'] as const)
    await cp(from[dir], p[dir], { recursive: true, verbatimSymlinks: true });
  return p;
}

/** A fresh audits folder: the sample audits (unless `samples` is false) plus `files`. */
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
 * runBuild's options for a project: fixed issuer and --now, and the default workers (a test's
 * project is small enough to be signed on the build's thread; tests about scheduling pass
 * `workers: 2` with small batches).
 */
export function buildOptions(
  p: Pick<Project, 'auditsDir' | 'recordsDir' | 'publicDir' | 'keysDir'>,
  overrides: Partial<BuildOptions> = {},
): BuildOptions {
  return {
    auditsDir: p.auditsDir,
    recordsDir: p.recordsDir,
    publicDir: p.publicDir,
    keysDir: p.keysDir,
    issuer: ISSUER,
    schemaUrl: SCHEMA_URL,
    now: NOW,
    signingKey: undefined,
    ...overrides,
  };
}

/** The real build of the project's audits. */
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

/** A project whose build has one record a pack: a fault of one pack, or a read of it held, is one record's. */
export async function onePackARecord(): Promise<Project> {
  const p = await makeProject({ build: false });
  await build(p, { packRecords: 1 });
  return p;
}

/** The live record file of a (normalized) domain in the tree a build writes for people to read when asked (`tree`: `records/current/<ab>/<domain>.json`); the service reads packs (./packs.ts). */
export function liveRecordFile(p: Pick<Project, 'recordsDir'>, domain: string): string {
  return join(p.recordsDir, CURRENT_LINK, recordPath(domain));
}
