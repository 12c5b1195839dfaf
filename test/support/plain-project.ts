/**
 * Vitest's global set-up: the plain test project (the sample audits, a signing key, one build)
 * made once per run, before any file. `makeProject()` copies it (test/support/project.ts): a
 * build costs about a second of CPU, a copy a few milliseconds. Each Vitest project (see
 * vitest.config.ts) makes its own; removed when the run ends.
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

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const root = await mkdtemp(join(tmpdir(), 'mvr-plain-'));
  await freshProject(root, {});
  project.provide('plainProject', root);
  return () => rm(root, { recursive: true, force: true });
}
