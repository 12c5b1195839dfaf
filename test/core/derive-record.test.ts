/** The whole derived record, the unverified record of a never-audited domain, the record schema, and audit validation. */
import { describe, expect, it } from 'vitest';
import { formatProblem } from '../../core/errors/errors.ts';
import { validateAudit } from '../../core/rules/audit.ts';
import { defaultSchemaUrl, deriveRecord, type IssueContext, MAX_SCORE, recordSchema, unverifiedRecord } from '../../core/rules/record.ts';
import { auditOf, baseAudit, ctx, derive, type Patch, problemsOf } from '../support/derive.ts';

describe('the whole derived record', () => {
  it('has exactly the documented members and values', () => {
    const r = derive({
      flags: ['missing_signal:reviews'],
      evidence: {
        ok: true,
        coverage: 0.5,
        site_coverage: 1,
        engines_ran: ['a'],
        engines_skipped: ['b'],
        blockers: ['robots.txt', { kind: 'captcha' }],
      },
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
      evidence: {
        ok: true,
        coverage: 0.5,
        site_coverage: 1,
        engines_ran: ['a'],
        engines_skipped: ['b'],
        blockers: ['robots.txt', { kind: 'captcha' }],
      },
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
    const other: IssueContext = {
      issuer: 'issuer.example.org',
      schemaUrl: 'https://cdn.example.net/s/verification/v1',
      issuedAt: '2030-01-01T00:00:00.000Z',
    };
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
    [
      'sub_scores.technical_readiness over 100',
      { sub_scores: { visibility: 1, recommendation_rate: 1, technical_readiness: 101 } },
      'sub_scores.technical_readiness',
    ],
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
    const result = validateAudit(
      { ...noFlags, domain: 'HTTPS://www.Shop.Example.co.uk/', evidence: { ok: true, coverage: 0, site_coverage: 0, engines_ran: [] } },
      's',
    );
    expect('audit' in result).toBe(true);
    if ('audit' in result) {
      expect(result.audit.domain).toBe('example.co.uk');
      expect(result.audit.flags).toEqual([]);
      expect(result.audit.evidence.engines_skipped).toEqual([]);
      expect(result.audit.evidence.blockers).toEqual([]);
    }
  });
});
