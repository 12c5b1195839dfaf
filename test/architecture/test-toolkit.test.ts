/**
 * One test toolkit: shared helpers live in test/support/ and tests import them from there. A
 * folder's own helpers.ts (a second makeProject with other defaults, a renamed freePort), and
 * later a security folder with fifteen modules and its own raw HTTP client, is how the suites
 * drifted apart; none may come back.
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

  it('outside test/support/ a test folder holds test files only (test/vectors/ also its data and their generators)', () => {
    const modules = files.filter(
      (f) => !f.endsWith('.test.ts') && !f.startsWith(join(TEST, 'support/')) && !f.startsWith(join(TEST, 'vectors/')),
    );
    expect(modules.map((f) => relative(ROOT, f))).toEqual([]);
  });

  it('has one raw HTTP client: only test/support/raw-http.ts splits answers read off a socket', () => {
    const reading = files.filter((f) => {
      const text = readFileSync(f, 'utf8');
      return text.includes("from 'node:net'") && text.includes("indexOf('\\r\\n\\r\\n')");
    });
    expect(reading.map((f) => relative(ROOT, f))).toEqual(['test/support/raw-http.ts']);
  });

  it("waits through test/support/wait.ts only: no test times its own wait with a deadline of Date.now() or a timer's promise", () => {
    const waiting = files.filter((f) => {
      if (f.startsWith(join(TEST, 'support/'))) return false;
      const text = readFileSync(f, 'utf8');
      return /\bDate\.now\(\)\s*\+\s*\d|new Promise\(\s*\(?\s*r(?:esolve)?\s*\)?\s*=>\s*setTimeout\(/.test(text);
    });
    expect(waiting.map((f) => relative(ROOT, f))).toEqual([]);
  });
});
