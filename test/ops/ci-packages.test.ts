/**
 * The tests that need a program from the distribution (redis-server, chromium, promtool) are
 * skipped where it is missing; CI must never be such a place. .ci/run installs what is missing;
 * the GitHub workflow must install the same packages.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allSteps, CI, loadWorkflow, ROOT } from '../support/workflow.ts';

/** The packages .ci/run installs when their program is missing (`missing="$missing <package>"`). */
function packagesOfCiRun(): string[] {
  const script = readFileSync(join(ROOT, '.ci', 'run'), 'utf8');
  return [...script.matchAll(/missing="\$missing ([a-z0-9-]+)"/g)].map((m) => m[1]!).sort();
}

/** The packages the workflow's `apt-get install` steps name. */
function packagesOfWorkflow(): string[] {
  const installs = allSteps(loadWorkflow(CI)).flatMap((s) => [
    ...(s.run ?? '').matchAll(/apt-get install((?: -\S+)*)((?: [a-z0-9][a-z0-9.+-]*)+)/g),
  ]);
  return installs.flatMap((m) => m[2]!.trim().split(/\s+/)).sort();
}

describe('the distribution packages CI installs', () => {
  it('are the ones .ci/run installs: redis-server, chromium and prometheus (promtool)', () => {
    expect(packagesOfCiRun()).toEqual(['chromium', 'prometheus', 'redis-server']);
    expect(packagesOfWorkflow()).toEqual(packagesOfCiRun());
  });
});
