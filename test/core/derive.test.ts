/** Deriving a record from an audit: tier, status, flags, rounded sub-scores, timestamps and next_audit_at. */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addOneMonth, daysInMonth, formatTimestamp, parseTimestamp } from '#shared';
import { validateAudit } from '../../core/rules/audit.ts';
import { deriveRecord, recordSchema, statusFor, tierFor } from '../../core/rules/record.ts';
import { auditOf, baseAudit, ctx, derive, type Patch } from '../support/derive.ts';

describe('tier', () => {
  const thin = { ...baseAudit.evidence, ok: false };
  const cases: [string, Patch, string | null][] = [
    ['100 -> gold', { score: 100 }, 'gold'],
    ['80 -> gold', { score: 80 }, 'gold'],
    ['79.99 -> silver', { score: 79.99 }, 'silver'],
    ['50 -> silver', { score: 50 }, 'silver'],
    ['49.99 -> bronze', { score: 49.99 }, 'bronze'],
    ['1 -> bronze', { score: 1 }, 'bronze'],
    ['0.99 -> null', { score: 0.99 }, null],
    ['0 -> null', { score: 0 }, null],
    ['null score (flagged) -> null', { score: null, flagged: true }, null],
    ['null score (thin evidence) -> null', { score: null, evidence: thin }, null],
    ['thin evidence forces null even at 95', { score: 95, evidence: thin }, null],
    ['thin evidence forces null at 100', { score: 100, evidence: thin }, null],
    ['flagged with a good score keeps its tier', { score: 90, flagged: true }, 'gold'],
  ];
  it.each(cases)('%s', (_name, patch, tier) => {
    expect(derive(patch).tier).toBe(tier);
  });

  it('tierFor agrees on the boundaries', () => {
    expect(tierFor(80, true)).toBe('gold');
    expect(tierFor(79.99, true)).toBe('silver');
    expect(tierFor(50, true)).toBe('silver');
    expect(tierFor(49.99, true)).toBe('bronze');
    expect(tierFor(1, true)).toBe('bronze');
    expect(tierFor(0.99, true)).toBe(null);
    expect(tierFor(0, true)).toBe(null);
    expect(tierFor(null, true)).toBe(null);
    expect(tierFor(95, false)).toBe(null);
  });

  it('the score is passed through unrounded', () => {
    expect(derive({ score: 79.99 }).score).toBe(79.99);
    expect(derive({ score: null, flagged: true }).score).toBe(null);
  });
});

describe('status', () => {
  const thin = { ...baseAudit.evidence, ok: false };
  const cases: [string, Patch, string][] = [
    ['evidence ok -> verified', {}, 'verified'],
    ['flagged false -> verified', { flagged: false }, 'verified'],
    ['evidence.ok false -> provisional', { evidence: thin }, 'provisional'],
    ['flagged -> flagged', { flagged: true }, 'flagged'],
    ['flagged wins over thin evidence', { flagged: true, evidence: thin }, 'flagged'],
    ['flagged with a null score', { flagged: true, score: null }, 'flagged'],
  ];
  it.each(cases)('%s', (_name, patch, status) => {
    expect(derive(patch).status).toBe(status);
  });

  it('statusFor on its own', () => {
    expect(statusFor({ flagged: true, evidence: { ...baseAudit.evidence, ok: false } })).toBe('flagged');
    expect(statusFor({ evidence: { ...baseAudit.evidence, ok: false } })).toBe('provisional');
    expect(statusFor({ flagged: false, evidence: baseAudit.evidence })).toBe('verified');
  });
});

describe('flags', () => {
  const thin = { ...baseAudit.evidence, ok: false };
  const cases: [string, Patch, string[]][] = [
    ['none -> []', {}, []],
    ['missing flags default to []', { flags: undefined }, []],
    ['thin evidence adds thin_evidence', { evidence: thin }, ['thin_evidence']],
    ['sorted', { flags: ['zeta', 'missing_signal:reviews', 'alpha'] }, ['alpha', 'missing_signal:reviews', 'zeta']],
    ['unique', { flags: ['b', 'a', 'b', 'a'] }, ['a', 'b']],
    ['thin_evidence already present is not doubled', { flags: ['thin_evidence'], evidence: thin }, ['thin_evidence']],
    ['thin_evidence sorted in', { flags: ['z_flag', 'missing_signal:x'], evidence: thin }, ['missing_signal:x', 'thin_evidence', 'z_flag']],
    ['thin_evidence given with ok evidence is kept as given', { flags: ['thin_evidence'] }, ['thin_evidence']],
  ];
  it.each(cases)('%s', (_name, patch, flags) => {
    expect(derive(patch).flags).toEqual(flags);
  });

  it('does not mutate the audit flags', () => {
    const audit = auditOf({ flags: ['b', 'a'], evidence: thin });
    deriveRecord(audit, ctx);
    expect(audit.flags).toEqual(['b', 'a']);
  });
});

describe('sub_scores are rounded to whole numbers', () => {
  const cases: [number, number][] = [
    [49.5, 50],
    [0.4, 0],
    [0.5, 1],
    [99.5, 100],
    [100, 100],
    [0, 0],
    [72.49, 72],
  ];
  it.each(cases)('%d -> %d', (input, expected) => {
    const r = derive({ sub_scores: { visibility: input, recommendation_rate: input, technical_readiness: input } });
    expect(r.sub_scores).toEqual({ visibility: expected, recommendation_rate: expected, technical_readiness: expected });
  });

  it('each member rounds separately', () => {
    expect(derive({ sub_scores: { visibility: 49.5, recommendation_rate: 0.4, technical_readiness: 99.9 } }).sub_scores).toEqual({
      visibility: 50,
      recommendation_rate: 0,
      technical_readiness: 100,
    });
  });
});

describe('timestamps and next_audit_at', () => {
  const cases: [string, string, string, string][] = [
    // [what, last_audited_at, expected last_audited_at, expected next_audit_at]
    ['mid-month', '2026-01-15T12:00:00Z', '2026-01-15T12:00:00.000Z', '2026-02-15T12:00:00.000Z'],
    ['Jan 31 -> Feb 28', '2026-01-31T00:00:00Z', '2026-01-31T00:00:00.000Z', '2026-02-28T00:00:00.000Z'],
    ['Jan 31 2028 -> Feb 29 2028 (leap year)', '2028-01-31T00:00:00Z', '2028-01-31T00:00:00.000Z', '2028-02-29T00:00:00.000Z'],
    ['Jan 30 -> Feb 28', '2026-01-30T08:00:00Z', '2026-01-30T08:00:00.000Z', '2026-02-28T08:00:00.000Z'],
    ['Jan 29 2027 -> Feb 28 2027', '2027-01-29T08:00:00Z', '2027-01-29T08:00:00.000Z', '2027-02-28T08:00:00.000Z'],
    ['Jan 31 2100 -> Feb 28 2100 (not a leap year)', '2100-01-31T00:00:00Z', '2100-01-31T00:00:00.000Z', '2100-02-28T00:00:00.000Z'],
    ['Jan 31 2000 -> Feb 29 2000 (leap year)', '2000-01-31T00:00:00Z', '2000-01-31T00:00:00.000Z', '2000-02-29T00:00:00.000Z'],
    ['Feb 28 -> Mar 28 (no clamping up)', '2026-02-28T10:00:00Z', '2026-02-28T10:00:00.000Z', '2026-03-28T10:00:00.000Z'],
    ['Feb 29 2028 -> Mar 29 2028', '2028-02-29T10:00:00Z', '2028-02-29T10:00:00.000Z', '2028-03-29T10:00:00.000Z'],
    ['Mar 31 -> Apr 30', '2026-03-31T06:07:08Z', '2026-03-31T06:07:08.000Z', '2026-04-30T06:07:08.000Z'],
    ['May 31 -> Jun 30', '2026-05-31T00:00:00Z', '2026-05-31T00:00:00.000Z', '2026-06-30T00:00:00.000Z'],
    ['Aug 31 -> Sep 30', '2026-08-31T00:00:00Z', '2026-08-31T00:00:00.000Z', '2026-09-30T00:00:00.000Z'],
    ['Oct 31 -> Nov 30', '2026-10-31T00:00:00Z', '2026-10-31T00:00:00.000Z', '2026-11-30T00:00:00.000Z'],
    ['Jul 31 -> Aug 31', '2026-07-31T00:00:00Z', '2026-07-31T00:00:00.000Z', '2026-08-31T00:00:00.000Z'],
    ['Dec 15 -> Jan 15 next year', '2026-12-15T09:30:00Z', '2026-12-15T09:30:00.000Z', '2027-01-15T09:30:00.000Z'],
    ['Dec 31 -> Jan 31 next year', '2026-12-31T23:59:59.999Z', '2026-12-31T23:59:59.999Z', '2027-01-31T23:59:59.999Z'],
    ['time of day kept to the millisecond', '2026-01-31T23:59:59.123Z', '2026-01-31T23:59:59.123Z', '2026-02-28T23:59:59.123Z'],
    ['fraction longer than ms is truncated', '2026-04-10T01:02:03.123456Z', '2026-04-10T01:02:03.123Z', '2026-05-10T01:02:03.123Z'],
    ['short fraction padded', '2026-04-10T01:02:03.5Z', '2026-04-10T01:02:03.500Z', '2026-05-10T01:02:03.500Z'],
    ['positive offset converted to UTC', '2026-01-31T10:11:12.345+02:00', '2026-01-31T08:11:12.345Z', '2026-02-28T08:11:12.345Z'],
    ['negative offset crossing a month end', '2026-01-31T23:30:00-02:00', '2026-02-01T01:30:00.000Z', '2026-03-01T01:30:00.000Z'],
    ['positive offset back into the previous month', '2026-03-01T00:30:00+01:00', '2026-02-28T23:30:00.000Z', '2026-03-28T23:30:00.000Z'],
    ['offset crossing a year end', '2027-01-01T00:15:00+05:30', '2026-12-31T18:45:00.000Z', '2027-01-31T18:45:00.000Z'],
    ['+00:00 is Z', '2026-06-30T12:00:00+00:00', '2026-06-30T12:00:00.000Z', '2026-07-30T12:00:00.000Z'],
  ];

  it.each(cases)('%s', (_what, last, expectedLast, expectedNext) => {
    const r = derive({ last_audited_at: last, first_seen: '1999-01-01T00:00:00Z' });
    expect(r.last_audited_at).toBe(expectedLast);
    expect(r.next_audit_at).toBe(expectedNext);
  });

  it('first_seen is written in UTC with milliseconds', () => {
    expect(derive({ first_seen: '2025-06-01T02:00:00+02:00' }).first_seen).toBe('2025-06-01T00:00:00.000Z');
  });

  it('every timestamp is YYYY-MM-DDTHH:mm:ss.sssZ', () => {
    const r = derive({ last_audited_at: '2026-01-31T10:11:12+02:00' });
    for (const t of [r.first_seen, r.last_audited_at, r.next_audit_at, r.issued_at]) {
      expect(t).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    }
  });

  it('formatTimestamp writes what Date#toISOString writes, at any instant (its own formatter for four-digit years)', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(-2000, 0, 1), max: Date.UTC(12000, 0, 1) }), (ms) => {
        expect(formatTimestamp(ms)).toBe(new Date(ms).toISOString());
      }),
      { numRuns: 20_000 },
    );
    for (const ms of [
      0,
      999,
      Date.UTC(999, 11, 31, 23, 59, 59, 999),
      Date.UTC(1000, 0, 1),
      Date.UTC(9999, 11, 31, 23, 59, 59, 999),
      Date.UTC(10000, 0, 1),
      -1,
    ]) {
      expect(formatTimestamp(ms)).toBe(new Date(ms).toISOString());
    }
    expect(() => formatTimestamp(Number.NaN)).toThrow(RangeError);
  });

  it('addOneMonth, formatTimestamp and daysInMonth directly', () => {
    expect(formatTimestamp(addOneMonth(Date.UTC(2026, 0, 31, 1, 2, 3, 4)))).toBe('2026-02-28T01:02:03.004Z');
    expect(formatTimestamp(addOneMonth(Date.UTC(2028, 0, 31)))).toBe('2028-02-29T00:00:00.000Z');
    expect(daysInMonth(2026, 1)).toBe(28);
    expect(daysInMonth(2028, 1)).toBe(29);
    expect(daysInMonth(2026, 11)).toBe(31);
    expect(daysInMonth(1900, 1)).toBe(28);
    expect(daysInMonth(2000, 1)).toBe(29);
    for (let year = 1970; year <= 2500; year++) {
      for (let month0 = 0; month0 < 12; month0++)
        expect(daysInMonth(year, month0)).toBe(new Date(Date.UTC(year, month0 + 1, 0)).getUTCDate());
    }
  });

  it.each([
    ['2026-02-30T00:00:00Z'],
    ['2026-02-29T00:00:00Z'],
    ['2026-04-31T00:00:00Z'],
    ['2026-13-01T00:00:00Z'],
    ['2026-00-10T00:00:00Z'],
    ['2026-01-00T00:00:00Z'],
    ['2026-01-01T24:00:00Z'],
    ['2026-01-01T23:60:00Z'],
    ['2026-01-01T23:59:60Z'],
    ['2026-01-01T00:00:00'],
    ['2026-01-01T00:00:00+2:00'],
    ['2026-01-01T00:00:00+24:00'],
    ['2026-01-01'],
    ['2026-01-01 00:00:00Z'],
    ['0999-01-01T00:00:00Z'],
    ['yesterday'],
    [''],
  ])('parseTimestamp refuses %j', (text) => {
    expect(parseTimestamp(text)).toBe(null);
  });

  // Timestamps from 9998-12-01 on (after the offset) are refused, so next_audit_at stays a four-digit year.
  it('an audit dated from December 9998 on is refused naming the member; one just before derives a record due then', () => {
    for (const last of ['9999-12-15T00:00:00Z', '9998-12-01T00:00:00Z', '9998-11-30T23:30:00-01:00']) {
      expect(validateAudit({ ...baseAudit, last_audited_at: last }, 's')).toEqual({
        problems: [expect.objectContaining({ source: 's', member: 'last_audited_at' })],
      });
    }
    const result = validateAudit({ ...baseAudit, last_audited_at: '9998-11-30T23:59:59Z' }, 's');
    if (!('audit' in result)) throw new Error(`refused: ${JSON.stringify(result)}`);
    expect(recordSchema.parse(deriveRecord(result.audit, ctx)).next_audit_at).toBe('9998-12-30T23:59:59.000Z');
  });
});
