/**
 * Programs from the distribution that some tests run for real (redis-server, chromium, promtool).
 * Where one is missing its tests are skipped, and say so: the title the report shows names the
 * missing program, and a warning says how to install it. `.ci/run` and the CI workflow install
 * them all, so CI skips none.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export interface Program {
  name: string;
  /** Where it is; null when it is not installed. */
  path: string | null;
}

/** A program found on PATH (or at one of `paths`); `pkg` is the Debian package that has it. */
export function program(name: string, pkg = name, paths: string[] = []): Program {
  const path =
    paths.find((p) => existsSync(p)) ?? (spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim() || null);
  if (!path) console.warn(`SKIPPED: the tests that need ${name} (not installed here; apt-get install ${pkg}, as .ci/run does)`);
  return { name, path };
}

/** The title of a test or block that needs `p`: when it is missing, the title says it was skipped for that. */
export function needing(p: Program, title: string): string {
  return skippedUnless(p.path !== null, `${p.name} is not installed`, title);
}

/** The title of a test that runs only when `runs` (root, a tool): otherwise it says it was skipped and why. */
export function skippedUnless(runs: boolean, why: string, title: string): string {
  return runs ? title : `${title} [SKIPPED: ${why}]`;
}
