/**
 * Bad-audit cases run against their own copy of a project that already has a good build: a bad
 * audit must fail the build with INVALID_AUDITS, name where it is, and leave records/ and public/
 * (and where records/current points) exactly as they were. Copies let the cases run side by side.
 */
import { basename } from 'node:path';
import { expect } from 'vitest';
import { InvalidAuditsError, type AuditProblem } from '@merchant-verify/verifier/errors';
import { currentTarget, snapshotOutputs } from './outputs.ts';
import { auditsFolder, buildFails, cloneProject, type Project } from './project.ts';

export interface Live {
  q: Project;
  before: Awaited<ReturnType<typeof snapshotOutputs>>;
  target: string;
}

export async function liveCopy(base: Project): Promise<Live> {
  const q = await cloneProject(base);
  return { q, before: await snapshotOutputs(q), target: await currentTarget(q.recordsDir) };
}

export async function expectUntouched({ q, before, target }: Live): Promise<void> {
  expect(await currentTarget(q.recordsDir)).toBe(target);
  const after = await snapshotOutputs(q);
  expect(after.records).toEqual(before.records);
  expect(after.public).toEqual(before.public);
  // 33 records, the manifest, the build statement, and the list of kept builds.
  expect(Object.keys(after.records).filter((n) => n.endsWith('.json')).length).toBe(36);
}

/** Builds the sample audits plus `files` into a live copy; expects INVALID_AUDITS and untouched outputs. */
export async function rejected(base: Project, files: Record<string, string>, opts: { workers?: number; batchSize?: number } = {}): Promise<InvalidAuditsError & { live: Live }> {
  const live = await liveCopy(base);
  const auditsDir = await auditsFolder(files);
  const error = await buildFails(live.q, { auditsDir, workers: opts.workers ?? 1, ...(opts.batchSize ? { batchSize: opts.batchSize } : {}) });
  expect(error.code).toBe('INVALID_AUDITS');
  expect(error).toBeInstanceOf(InvalidAuditsError);
  await expectUntouched(live);
  return Object.assign(error as InvalidAuditsError, { live });
}

export const file = (problem: AuditProblem) => basename(problem.source);
