/**
 * Mirrors for the mirror tests: a logged project built with two records a pack (so a few dozen
 * packs), published to the S3 test server, and `mvr mirror` run on it.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type CliResult, runCli } from './cli.ts';
import { loggedProject } from './logged-project.ts';
import { build, copyProject, type Project } from './project.ts';
import { publishTo } from './s3-records.ts';
import type { TestS3 } from './s3-server.ts';

/** Records a pack in the mirror tests' builds: many packs from the sample audits. */
export const PACK_RECORDS = 2;

/** A logged project with one build of two records a pack, dated `now`. */
export async function packedProject(now: number): Promise<Project> {
  const p = await loggedProject();
  await build(p, { now, packRecords: PACK_RECORDS });
  return p;
}

/** The packs of a project's live build, in the statement's order. */
export async function packsOf(p: Project): Promise<{ sha256: string; bytes: number }[]> {
  const statement = JSON.parse(await readFile(join(p.recordsDir, 'current', 'statement.json'), 'utf8')) as {
    packs: { files: { sha256: string; bytes: number }[] };
  };
  return statement.packs.files;
}

/** The path of pack `k` of a project's live build. */
export const packFile = async (p: Project, k: number) => join(p.recordsDir, 'current', 'packs', `${(await packsOf(p))[k]!.sha256}.jsonl`);

/** The lines (records) of pack `k`. */
export async function packLines(p: Project, k: number): Promise<string[]> {
  return (await readFile(await packFile(p, k), 'utf8')).split('\n').slice(0, -1);
}

/** Writes pack `k` of a copy of `p` as `lines` (its name kept: what a bucket holding a changed pack serves). */
export async function rewritePack(p: Project, k: number, lines: string[]): Promise<void> {
  await writeFile(await packFile(p, k), lines.map((l) => `${l}\n`).join(''));
}

/** A copy of `p`, changed by `change`, published to `s3://bucket/prefix`. */
export async function publishChanged(s3: TestS3, bucket: string, prefix: string, p: Project, change: (copy: Project) => Promise<void>) {
  const copy = await copyProject(p);
  await change(copy);
  await publishTo(s3, bucket, prefix, copy);
}

/** `mvr mirror --from s3://bucket/prefix --to dir --trusted-keys <p's key set> --json`, with the S3 server's variables. */
export function mirrorCli(s3: TestS3, from: string, to: string, trusted: Project, more: string[] = []): Promise<CliResult> {
  return runCli(['mirror', '--from', from, '--to', to, '--trusted-keys', trusted.keySetFile, '--json', ...more], s3.env);
}

/** The builds a mirror folder holds (its `builds/`, without staging). */
export async function buildsIn(dir: string): Promise<string[]> {
  return (await readdir(join(dir, 'builds'))).filter((n) => !n.startsWith('.')).sort();
}
