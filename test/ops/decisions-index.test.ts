/**
 * The decisions index (docs/decisions/README.md) is a map a newcomer can trust: one row per decision
 * file, in number order, with a column for what each supersedes, and the numbers no decision has
 * said aloud.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/project.ts';

const DIR = join(ROOT, 'docs/decisions');
const files = readdirSync(DIR).filter((f) => /^\d{4}-.+\.md$/.test(f));
const index = readFileSync(join(DIR, 'README.md'), 'utf8');
const rows = [...index.matchAll(/^\| \[(\d{4})\]\((\d{4}-[^)]+\.md)\) \|[^\n]*\|[^\n]*\|$/gm)];

describe('the decisions index', () => {
  it('has one three-column row per decision file, in number order, each linking its own file', () => {
    expect(index).toContain('| # | decision | supersedes |');
    expect(rows.map((r) => r[2])).toEqual([...files].sort());
    expect(rows.every((r) => r[2]!.startsWith(r[1]!))).toBe(true);
  });

  it('says why 0046 and 0060, numbers no decision has, are missing', () => {
    const numbers = new Set(files.map((f) => f.slice(0, 4)));
    const said = /^Numbers [^\n]*have no decision:[\s\S]*?\n\n/m.exec(index)?.[0] ?? '';
    for (const n of ['0046', '0060']) {
      expect(numbers.has(n), n).toBe(false);
      expect(said, n).toContain(n);
    }
    expect(said).toMatch(/never reused/);
  });
});
