import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { validateAudit, type Audit } from '../../core/audit.ts';
import {
  MAX_SCORE,
  defaultSchemaUrl,
  deriveRecord,
  recordSchema,
  statusFor,
  tierFor,
  unverifiedRecord,
  type IssueContext,
  type UnsignedRecord,
} from '../../core/record.ts';
import { addOneMonth, daysInMonth, formatTimestamp, parseTimestamp } from '@merchant-verify/verifier/time';
import { formatProblem, type AuditProblem } from '@merchant-verify/verifier/errors';

const ctx: IssueContext = {
  issuer: 'verify.example.com',
  schemaUrl: defaultSchemaUrl('verify.example.com'),
  issuedAt: '2026-02-01T00:00:00.000Z',
};

const baseAudit = {
  domain: 'www.Example.com',
  score: 85,
  sub_scores: { visibility: 70, recommendation_rate: 60, technical_readiness: 90 },
  flags: [] as string[],
  evidence: { ok: true, coverage: 0.8, site_coverage: 0.9, engines_ran: ['alpha', 'beta'], engines_skipped: [], blockers: [] },
  archetype: 'retail',
  first_seen: '2025-06-01T00:00:00Z',
  last_audited_at: '2026-01-15T12:00:00Z',
};

type Patch = { [K in keyof typeof baseAudit]?: unknown } & { flagged?: unknown; [extra: string]: unknown };

function auditOf(patch: Patch = {}): Audit {
  const result = validateAudit({ ...baseAudit, ...patch }, 'test.json');
  if (!('audit' in result)) throw new Error(`audit did not validate: ${result.problems.map(formatProblem).join('; ')}`);
  return result.audit;
}

function derive(patch: Patch = {}): UnsignedRecord {
  const record = deriveRecord(auditOf(patch), ctx);
  recordSchema.parse(record); // every derived record is a valid record
  return record;
}

function problemsOf(value: unknown, source = 'audits/a.jsonl:3'): AuditProblem[] {
  const result = validateAudit(value, source);
  if (!('problems' in result)) throw new Error('expected problems');
  return result.problems;
}

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
    for (const ms of [0, 999, Date.UTC(999, 11, 31, 23, 59, 59, 999), Date.UTC(1000, 0, 1), Date.UTC(9999, 11, 31, 23, 59, 59, 999), Date.UTC(10000, 0, 1), -1]) {
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
      for (let month0 = 0; month0 < 12; month0++) expect(daysInMonth(year, month0)).toBe(new Date(Date.UTC(year, month0 + 1, 0)).getUTCDate());
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

  // Timestamps near year 9999 are refused so next_audit_at stays a four-digit year.
  it('an audit with last_audited_at in December 9999 either fails validation or derives a valid record', () => {
    for (const last of ['9999-12-15T00:00:00Z', '9999-12-31T23:30:00-01:00']) {
      const result = validateAudit({ ...baseAudit, first_seen: '9999-01-01T00:00:00Z', last_audited_at: last }, 's');
      if ('audit' in result) recordSchema.parse(deriveRecord(result.audit, ctx));
    }
  });
});

describe('the whole derived record', () => {
  it('has exactly the documented members and values', () => {
    const r = derive({
      flags: ['missing_signal:reviews'],
      evidence: { ok: true, coverage: 0.5, site_coverage: 1, engines_ran: ['a'], engines_skipped: ['b'], blockers: ['robots.txt', { kind: 'captcha' }] },
      sub_scores: { visibility: 49.5, recommendation_rate: 0.4, technical_readiness: 100 },
    });
    expect(r).toEqual({
      schema: 'https://verify.example.com/schemas/verification/v1',
      domain: 'example.com',
      status: 'verified',
      tier: 'gold',
      score: 85,
      max_score: 100,
      sub_scores: { visibility: 50, recommendation_rate: 0, technical_readiness: 100 },
      flags: ['missing_signal:reviews'],
      evidence: { ok: true, coverage: 0.5, site_coverage: 1, engines_ran: ['a'], engines_skipped: ['b'], blockers: ['robots.txt', { kind: 'captcha' }] },
      archetype: 'retail',
      first_seen: '2025-06-01T00:00:00.000Z',
      last_audited_at: '2026-01-15T12:00:00.000Z',
      next_audit_at: '2026-02-15T12:00:00.000Z',
      issuer: 'verify.example.com',
      issued_at: '2026-02-01T00:00:00.000Z',
    });
    expect('key_id' in r).toBe(false);
    expect('signature' in r).toBe(false);
    expect(r.schema.endsWith('/verification/v1')).toBe(true);
    expect(MAX_SCORE).toBe(100);
  });

  it('defaults engines_skipped and blockers to []', () => {
    const r = derive({ evidence: { ok: true, coverage: 0.5, site_coverage: 0.5, engines_ran: ['a'] } });
    expect(r.evidence.engines_skipped).toEqual([]);
    expect(r.evidence.blockers).toEqual([]);
  });

  it('is pure: the same audit and context give the same record', () => {
    const audit = auditOf({ flags: ['b', 'a'] });
    expect(deriveRecord(audit, ctx)).toEqual(deriveRecord(audit, ctx));
  });

  it('normalizes the domain (IDN, subdomain, URL)', () => {
    expect(derive({ domain: 'https://WWW.Bücher.example/shop' }).domain).toBe('xn--bcher-kva.example');
  });

  it('uses the context for schema, issuer and issued_at', () => {
    const other: IssueContext = { issuer: 'issuer.example.org', schemaUrl: 'https://cdn.example.net/s/verification/v1', issuedAt: '2030-01-01T00:00:00.000Z' };
    const r = deriveRecord(auditOf(), other);
    expect(r).toMatchObject({ schema: other.schemaUrl, issuer: other.issuer, issued_at: other.issuedAt });
    recordSchema.parse(r);
  });

  it('defaultSchemaUrl', () => {
    expect(defaultSchemaUrl('verify.example.com')).toBe('https://verify.example.com/schemas/verification/v1');
  });
});

describe('unverifiedRecord (never-audited domains)', () => {
  it('has exactly the documented shape', () => {
    const r = unverifiedRecord('example.com', ctx);
    expect(r).toEqual({
      schema: 'https://verify.example.com/schemas/verification/v1',
      domain: 'example.com',
      status: 'unverified',
      tier: null,
      score: null,
      max_score: 100,
      sub_scores: { visibility: 0, recommendation_rate: 0, technical_readiness: 0 },
      flags: [],
      evidence: { ok: false, coverage: 0, site_coverage: 0, engines_ran: [], engines_skipped: [], blockers: [] },
      archetype: 'unknown',
      first_seen: null,
      last_audited_at: null,
      next_audit_at: null,
      issuer: 'verify.example.com',
      issued_at: '2026-02-01T00:00:00.000Z',
    });
    expect(Object.keys(r)).toHaveLength(15); // the record's members less key_id and signature
    recordSchema.parse(r);
  });

  it('records do not share mutable state between calls', () => {
    const a = unverifiedRecord('a.example', ctx);
    a.flags.push('x');
    a.evidence.engines_ran.push('y');
    const b = unverifiedRecord('b.example', ctx);
    expect(b.flags).toEqual([]);
    expect(b.evidence.engines_ran).toEqual([]);
  });
});

describe('recordSchema', () => {
  it('refuses unknown members, bad timestamps, a bad signature form, and a schema URL with the wrong suffix', () => {
    const good = derive();
    expect(recordSchema.safeParse(good).success).toBe(true);
    expect(recordSchema.safeParse({ ...good, expires_at: '2027-01-01T00:00:00.000Z' }).success).toBe(false);
    expect(recordSchema.safeParse({ ...good, issued_at: '2026-02-01T00:00:00Z' }).success).toBe(false);
    expect(recordSchema.safeParse({ ...good, signature: 'ed25519:abc' }).success).toBe(false);
    expect(recordSchema.safeParse({ ...good, schema: 'https://x.example/verification/v2' }).success).toBe(false);
    expect(recordSchema.safeParse({ ...good, max_score: 10 }).success).toBe(false);
    expect(recordSchema.safeParse({ ...good, sub_scores: { ...good.sub_scores, visibility: 49.5 } }).success).toBe(false);
  });
});

describe('validateAudit', () => {
  const cases: [string, Patch, string][] = [
    // [what, patch, member named]
    ['score over 100', { score: 100.01 }, 'score'],
    ['score below 0', { score: -1 }, 'score'],
    ['score not a number', { score: '85' }, 'score'],
    ['score null with evidence ok and not flagged', { score: null }, 'score'],
    ['score null with flagged false', { score: null, flagged: false }, 'score'],
    ['missing sub_scores.visibility', { sub_scores: { recommendation_rate: 1, technical_readiness: 1 } }, 'sub_scores.visibility'],
    ['sub_scores.technical_readiness over 100', { sub_scores: { visibility: 1, recommendation_rate: 1, technical_readiness: 101 } }, 'sub_scores.technical_readiness'],
    ['evidence.coverage over 1', { evidence: { ...baseAudit.evidence, coverage: 1.01 } }, 'evidence.coverage'],
    ['evidence.site_coverage below 0', { evidence: { ...baseAudit.evidence, site_coverage: -0.1 } }, 'evidence.site_coverage'],
    ['evidence.ok missing', { evidence: { coverage: 0.5, site_coverage: 0.5, engines_ran: [] } }, 'evidence.ok'],
    ['engines_ran element empty', { evidence: { ...baseAudit.evidence, engines_ran: ['a', ''] } }, 'evidence.engines_ran[1]'],
    ['bad timestamp', { first_seen: 'yesterday' }, 'first_seen'],
    ['timestamp without zone', { last_audited_at: '2026-01-15T12:00:00' }, 'last_audited_at'],
    ['invalid date Feb 30', { last_audited_at: '2026-02-30T00:00:00Z' }, 'last_audited_at'],
    ['first_seen after last_audited_at', { first_seen: '2026-01-15T12:00:00.001Z' }, 'first_seen'],
    ['bad domain (public suffix)', { domain: 'co.uk' }, 'domain'],
    ['bad domain (IP)', { domain: '127.0.0.1' }, 'domain'],
    ['domain missing', { domain: undefined }, 'domain'],
    ['domain not a string', { domain: 42 }, 'domain'],
    ['archetype empty', { archetype: '' }, 'archetype'],
    ['archetype only spaces', { archetype: '   ' }, 'archetype'],
    ['flag with a space', { flags: ['bad flag'] }, 'flags[0]'],
    ['flag in upper case', { flags: ['ok', 'THIN'] }, 'flags[1]'],
    ['flagged not a boolean', { flagged: 'yes' }, 'flagged'],
    ['blocker of the wrong type', { evidence: { ...baseAudit.evidence, blockers: [42] } }, 'evidence.blockers[0]'],
  ];

  it.each(cases)('%s -> a problem naming %s', (_what, patch, member) => {
    const problems = problemsOf({ ...baseAudit, ...patch });
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.map((p) => p.member)).toContain(member);
    for (const p of problems) expect(p.source).toBe('audits/a.jsonl:3');
  });

  it('an unknown member gives a problem that names it', () => {
    const problems = problemsOf({ ...baseAudit, expires_at: '2027-01-01T00:00:00Z' });
    expect(problems).toHaveLength(1);
    // The member name is in the formatted line (zod reports unrecognized keys on the parent object).
    expect(formatProblem(problems[0]!)).toContain('expires_at');
    expect(formatProblem(problems[0]!).startsWith('audits/a.jsonl:3: ')).toBe(true);
  });

  it('an unknown member inside evidence is refused too', () => {
    const problems = problemsOf({ ...baseAudit, evidence: { ...baseAudit.evidence, extra: 1 } });
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.map(formatProblem).join('\n')).toContain('extra');
  });

  it.each([
    ['null', null],
    ['an array', [baseAudit]],
    ['a string', 'example.com'],
    ['a number', 7],
    ['undefined', undefined],
  ])('a non-object (%s) gives one problem, with the source passed through', (_what, value) => {
    const problems = problemsOf(value, 'audits/b.json[4]');
    expect(problems).toHaveLength(1);
    expect(problems[0]!.source).toBe('audits/b.json[4]');
  });

  it('reports every problem, not just the first, each with the source', () => {
    const problems = problemsOf({ ...baseAudit, domain: 'co.uk', score: 200, evidence: { ...baseAudit.evidence, coverage: 2 } }, 'x.json');
    const members = problems.map((p) => p.member);
    expect(members).toEqual(expect.arrayContaining(['domain', 'score', 'evidence.coverage']));
    expect(problems.every((p) => p.source === 'x.json')).toBe(true);
  });

  it('accepts null scores when evidence is thin or the audit is flagged', () => {
    expect('audit' in validateAudit({ ...baseAudit, score: null, evidence: { ...baseAudit.evidence, ok: false } }, 's')).toBe(true);
    expect('audit' in validateAudit({ ...baseAudit, score: null, flagged: true }, 's')).toBe(true);
  });

  it('accepts first_seen equal to last_audited_at, and an offset that puts first_seen before it', () => {
    expect('audit' in validateAudit({ ...baseAudit, first_seen: baseAudit.last_audited_at }, 's')).toBe(true);
    // 13:00+02:00 is 11:00Z, before 12:00Z.
    expect('audit' in validateAudit({ ...baseAudit, first_seen: '2026-01-15T13:00:00+02:00' }, 's')).toBe(true);
  });

  it('returns the audit with the domain normalized and defaults applied', () => {
    const { flags: _flags, ...noFlags } = baseAudit;
    const result = validateAudit({ ...noFlags, domain: 'HTTPS://www.Shop.Example.co.uk/', evidence: { ok: true, coverage: 0, site_coverage: 0, engines_ran: [] } }, 's');
    expect('audit' in result).toBe(true);
    if ('audit' in result) {
      expect(result.audit.domain).toBe('example.co.uk');
      expect(result.audit.flags).toEqual([]);
      expect(result.audit.evidence.engines_skipped).toEqual([]);
      expect(result.audit.evidence.blockers).toEqual([]);
    }
  });
});
