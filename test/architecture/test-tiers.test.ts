/**
 * The suite's two tiers (test/support/tiers.ts): the unit tier runs in the test process only, the
 * end-to-end tier is every other file, and `npm test` runs both.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fg from 'fast-glob';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/project.ts';
import { startsSomething, unitTestFiles } from '../support/tiers.ts';

const unit = unitTestFiles(ROOT);
const all = fg.sync('test/**/*.test.ts', { cwd: ROOT }).sort();

describe('the test tiers', () => {
  it('the unit tier holds the in-process tests, test/service among them, and none that starts a gateway or the CLI', () => {
    expect(unit).toEqual(
      expect.arrayContaining(['test/service/answers.test.ts', 'test/core/domain.test.ts', 'test/architecture/imports.test.ts']),
    );
    expect(unit).not.toEqual(expect.arrayContaining(['test/gateway/bundle.test.ts']));
    expect(unit.length).toBeGreaterThan(40);
    expect(unit.length).toBeLessThan(all.length);
  });

  it('the reading sorts a file by what it starts: a gateway, the CLI in or out of the process, a process or a server of its own', () => {
    // Written in two parts, so this file's own text starts nothing and it stays in the unit tier.
    for (const text of [
      'const g = await startTest' + 'Gateway(project);',
      'await run' + "Cli(['build']);",
      'import { sp' + "awn } from 'node:child" + "_process';",
      'server.lis' + 'ten(0);',
    ])
      expect(startsSomething(text), text).toBe(true);
    expect(startsSomething("const p = await makeProject();\nexpect(normalizeDomain('a.example')).toBe('a.example');")).toBe(false);
  });

  it('npm test runs every project; npm run test:unit runs the unit tier only', () => {
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(scripts.test).toMatch(/vitest run$/);
    expect(scripts['test:unit']).toBe('vitest run --project unit');
  });
});
