/**
 * One test toolkit: shared helpers live in test/support/ and tests import them from there. A
 * folder's own helpers.ts (a second makeProject with other defaults, a renamed freePort) is how
 * the suites once drifted apart; none may come back.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/project.ts';

const TEST = join(ROOT, 'test');
const files = (readdirSync(TEST, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts')).map((f) => join(TEST, f));

describe('the test toolkit', () => {
  it('has no helpers module outside test/support/', () => {
    expect(files.filter((f) => /(^|\/)helpers\.ts$/.test(f)).map((f) => relative(ROOT, f))).toEqual([]);
  });

  it('no test file imports a helpers module', () => {
    const importing = files.filter((f) => /from '[^']*\/helpers(\.ts)?'/.test(readFileSync(f, 'utf8')));
    expect(importing.map((f) => relative(ROOT, f))).toEqual([]);
  });
});
