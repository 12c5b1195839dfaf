/**
 * Bad-audit cases run against their own copy of a project that already has a good build: a bad
 * audit must fail the build with INVALID_AUDITS, name where it is, and leave records/ and public/
 * (and where records/current points) exactly as they were. Copies let the cases run side by side.
 */
import { basename, sep } from 'node:path';
import { expect } from 'vitest';
import type { BuildOptions } from '../../builder/options.ts';
import { type AuditProblem, InvalidAuditsError } from '../../core/errors/errors.ts';
import { currentTarget, readCurrentRecords, snapshotOutputs } from './outputs.ts';
import { auditsFolder, buildFails, copyProject, type Project } from './project.ts';

export interface Live {
  q: Project;
  before: Awaited<ReturnType<typeof snapshotOutputs>>;
  target: string;
}

export async function liveCopy(base: Project): Promise<Live> {
  const q = await copyProject(base);
  return { q, before: await snapshotOutputs(q), target: await currentTarget(q.recordsDir) };
}

export async function expectUntouched({ q, before, target }: Live): Promise<void> {
  expect(await currentTarget(q.recordsDir)).toBe(target);
  const after = await snapshotOutputs(q);
  expect(after.records).toEqual(before.records);
  expect(after.public).toEqual(before.public);
  expect((await readCurrentRecords(q.recordsDir)).size).toBe(33);
}

/** Builds the sample audits plus `files` into a live copy; expects INVALID_AUDITS and untouched outputs. */
export async function rejected(
  base: Project,
  files: Record<string, string>,
  opts: Pick<BuildOptions, 'workers' | 'batchSize' | 'indexThreadFrom'> = {},
): Promise<InvalidAuditsError & { live: Live }> {
  const live = await liveCopy(base);
  const auditsDir = await auditsFolder(files);
  const error = await buildFails(live.q, { auditsDir, ...opts });
  expect(error.code).toBe('INVALID_AUDITS');
  expect(error).toBeInstanceOf(InvalidAuditsError);
  await expectUntouched(live);
  return Object.assign(error as InvalidAuditsError, { live });
}

export const file = (problem: AuditProblem) => basename(problem.source);

/** The problems of one case of {@link rejectedTogether}: those whose file is in the case's folder. */
export type ProblemsOf = (name: string) => AuditProblem[];

/**
 * Many independent cases in one failing build (each build starts a worker thread, about a second
 * of CPU): each case's files go in a folder named after it, beside the sample audits, and its
 * problems are those found in that folder. Every problem must belong to a case and all must be
 * kept, so a problem a case did not expect fails that case. The cases' valid audits must use
 * domains of their own (a domain audited twice is a problem of its own).
 */
export async function rejectedTogether(base: Project, cases: Record<string, Record<string, string>>): Promise<ProblemsOf> {
  const files: Record<string, string> = {};
  for (const [name, caseFiles] of Object.entries(cases))
    for (const [path, text] of Object.entries(caseFiles)) files[`${name}/${path}`] = text;
  const error = await rejected(base, files);
  expect(error.problems).toHaveLength(error.total);
  const caseOf = (problem: AuditProblem) => Object.keys(cases).find((name) => problem.source.includes(`${sep}${name}${sep}`));
  expect(error.problems.filter((problem) => caseOf(problem) === undefined)).toEqual([]);
  return (name) => {
    if (!(name in cases)) throw new Error(`no case named ${name}`);
    return error.problems.filter((problem) => caseOf(problem) === name);
  };
}
