/**
 * Vitest's global set-up: the plain test project (the sample audits, a signing key, one build)
 * made once per run, before any file. `makeProject()` copies it (test/support/project.ts): a
 * build costs about a second of CPU, a copy a few milliseconds. Made once for the whole run: the
 * first Vitest project (see vitest.config.ts) to start makes it and gives it to every project (the
 * projects' set-ups run one after the other, in the one Vitest process); removed when the run ends.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { freshProject } from './project.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The root of the plain project every `makeProject()` copies. */
    plainProject: string;
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  // Another project of this run made it already: a second build would cost 2.3 s of CPU for the same files.
  if (project.vitest.getProvidedContext().plainProject) return undefined;
  const root = await mkdtemp(join(tmpdir(), 'mvr-plain-'));
  await freshProject(root, {});
  project.vitest.provide('plainProject', root);
  return () => rm(root, { recursive: true, force: true });
}
