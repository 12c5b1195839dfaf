/**
 * docs/audit-input.md's table of what collapses onto a registrable domain says what the one
 * domain rule does: each row's inputs normalize to its record, and the refused ones are refused.
 * Its table of members names every member the audit schema has (`archetype` included), and no other.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { auditSchema } from '../../core/rules/audit.ts';
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

describe('docs/audit-input.md: the members', () => {
  it("names every member of the audit schema in its table, nested ones as `evidence.x` and `sub_scores`' in its rule", () => {
    const table = page.slice(page.indexOf('| member |'), page.indexOf('\n\n', page.indexOf('| member |')));
    const named = new Set(
      [...table.matchAll(/^\| ([^|]+) \|/gm)].flatMap(([, cell]) => [...cell!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!)),
    );
    const { evidence, ...top } = auditSchema.shape;
    const members = [...Object.keys(top), ...Object.keys(evidence.shape).map((k) => `evidence.${k}`)];
    expect([...named].sort()).toEqual(members.sort());
    const subScores = table.split('\n').find((row) => row.startsWith('| `sub_scores` |'))!;
    for (const k of Object.keys(auditSchema.shape.sub_scores.shape)) expect(subScores).toContain(`\`${k}\``);
  });
});
