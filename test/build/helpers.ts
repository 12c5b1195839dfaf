/**
 * The build tests' helpers, kept for the suites that import them here: every one is the shared
 * test fixture's (test/support/), except `makeProject`, whose defaults here are the build
 * suites' (no key unless `keygen`, no build). New tests import test/support/ directly.
 */
import { makeProject as makeSharedProject, type Project } from '../support/project.ts';

export { auditsFolder, build, buildFails, buildOptions, copyProject, ISSUER, NOW, NOW_ISO, removeTempDirs, ROOT, SAMPLE_AUDITS, SCHEMA_URL, tempDir, writeFiles, type Project } from '../support/project.ts';
export { buildArgs, cliEnv, lines, runCli, type CliResult } from '../support/cli.ts';
export { currentTarget, listFiles, readCurrentFiles, readCurrentRecords, readKeySet, snapshot, snapshotOutputs, type RecordFile } from '../support/outputs.ts';
export { audit, jsonl, sampleAudits } from '../support/audits.ts';

/** A temp project with the sample audits (unless `samples: false`) and `files`; a key only with `keygen`; not built. */
export function makeProject(opts: { samples?: boolean; keygen?: boolean; files?: Record<string, string> } = {}): Promise<Project> {
  return makeSharedProject({ samples: opts.samples, files: opts.files, sign: opts.keygen === true, build: false });
}
