/**
 * docs/audit-input.md's table of what collapses onto a registrable domain says what the one
 * domain rule does: each row's inputs normalize to its record, and the refused ones are refused.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { normalizeDomain } from '../../core/rules/domain.ts';
import { ROOT } from '../support/project.ts';
import { thrown } from '../support/thrown.ts';

const page = readFileSync(join(ROOT, 'docs/audit-input.md'), 'utf8');
const section = page.slice(page.indexOf('## One record per registrable domain'), page.indexOf('## Bad audits'));
/** The table's rows as [inputs, record]: the code spans of each cell. */
const rows = [...section.matchAll(/^\| (.+) \| (.+) \|$/gm)]
  .map(([, given, record]) => [[...given!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!), record!] as const)
  .filter(([given]) => given.length > 0 && !given.includes('audit'));

describe('docs/audit-input.md: one record per registrable domain', () => {
  it('has the examples the rule is known by', () => {
    expect(rows.flatMap(([given]) => given)).toEqual(
      expect.arrayContaining(['https://www.shop.example.co.uk/x', 'shop-1.example.com', 'store.myshopify.com', 'co.uk']),
    );
  });

  it.each(rows)('%j -> %s', (given, record) => {
    const expected = /^`([^`]+)`$/.exec(record)?.[1];
    for (const domain of given) {
      if (expected) expect(normalizeDomain(domain), domain).toBe(expected);
      else expect(thrown(() => normalizeDomain(domain))).toMatchObject({ code: 'INVALID_DOMAIN' });
    }
  });
});
