import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { KeySet } from '@merchant-verify/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '#shared';
import type { BuildSummary } from '../../builder/build.ts';
import { verifyRecordNode } from '../../core/crypto/signing.ts';
import { BUILDS_DIR, CURRENT_LINK, MANIFEST_FILE, recordPath } from '../../core/layout.ts';
import { normalizeDomain } from '../../core/rules/domain.ts';
import { recordSchema } from '../../core/rules/record.ts';
import { sampleAudits } from '../support/audits.ts';
import { currentTarget, type RecordFile, readCurrentRecords, readKeySet, readRecordTree } from '../support/outputs.ts';
import { build, ISSUER, makeProject, NOW_ISO, type Project, removeTempDirs, SCHEMA_URL } from '../support/project.ts';

describe('build of the sample audits (runBuild, signed)', () => {
  let p: Project;
  let summary: BuildSummary;
  let records: Map<string, RecordFile>;
  let tree: Awaited<ReturnType<typeof readRecordTree>>;
  let keySet: KeySet;
  let keySetText: string;
  let samples: Awaited<ReturnType<typeof sampleAudits>>;

  beforeAll(async () => {
    p = await makeProject({ samples: true, sign: true, build: false });
    summary = await build(p, { workers: 2, batchSize: 4, tree: true });
    records = await readCurrentRecords(p.recordsDir);
    tree = await readRecordTree(p.recordsDir);
    ({ keySet, text: keySetText } = await readKeySet(p.publicDir));
    samples = await sampleAudits();
  });
  afterAll(removeTempDirs);

  const rec = (domain: string): Record<string, unknown> => {
    const r = records.get(domain);
    if (!r) throw new Error(`no record for ${domain}; have ${[...records.keys()].join(', ')}`);
    return r.record;
  };

  it('builds one record per sample audit, keyed by the normalized domain', () => {
    expect(samples.length).toBe(33);
    const expected = samples.map((s) => normalizeDomain(s.domain)).sort();
    expect(new Set(expected).size).toBe(samples.length);
    expect([...records.keys()].sort()).toEqual(expected);
    expect(summary.records).toBe(samples.length);
    expect(summary.files).toBe(5);
    expect(summary.signed).toBe(true);
    expect(summary.keyId).toBe(p.kid);
    expect(summary.publishedKeyIds).toEqual([p.kid]);
    expect(summary.issuedAt).toBe(NOW_ISO);
  });

  it('counts records by status and tier in the summary, matching the files on disk', () => {
    expect(summary.byStatus).toEqual({ flagged: 3, provisional: 3, verified: 27 });
    expect(summary.byTier).toEqual({ bronze: 8, gold: 6, none: 7, silver: 12 });
    const byStatus: Record<string, number> = {},
      byTier: Record<string, number> = {};
    for (const { record } of records.values()) {
      const s = String(record.status),
        t = record.tier === null ? 'none' : String(record.tier);
      byStatus[s] = (byStatus[s] ?? 0) + 1;
      byTier[t] = (byTier[t] ?? 0) + 1;
    }
    expect(byStatus).toEqual(summary.byStatus);
    expect(byTier).toEqual(summary.byTier);
  });

  it('publishes records/current as a relative symlink to builds/<buildId> with a manifest', async () => {
    expect(await currentTarget(p.recordsDir)).toBe(join(BUILDS_DIR, summary.buildId));
    expect(summary.buildDir).toBe(join(p.recordsDir, BUILDS_DIR, summary.buildId));
    const manifest = JSON.parse(await readFile(join(p.recordsDir, CURRENT_LINK, MANIFEST_FILE), 'utf8'));
    expect(manifest).toEqual({
      issuer: ISSUER,
      issued_at: NOW_ISO,
      schema: SCHEMA_URL,
      records: 33,
      by_status: summary.byStatus,
      by_tier: summary.byTier,
      key_id: p.kid,
      key_ids_published: [p.kid],
      log: null,
    });
  });

  it('packs each record as canonical JSON bytes; with the tree asked for, the same bytes at current/<ab>/<domain>.json', () => {
    expect([...tree.keys()].sort()).toEqual([...records.keys()].sort());
    for (const [domain, { text }] of records) {
      expect(canonicalJson(JSON.parse(text))).toBe(text);
      expect(tree.get(domain)).toEqual({ rel: recordPath(domain), text, record: JSON.parse(text) });
    }
  });

  it('publishes the key set as canonical JSON holding exactly the active public key', async () => {
    expect(keySetText).toBe(`${canonicalJson(JSON.parse(keySetText))}\n`);
    expect(keySet.keys).toHaveLength(1);
    expect(keySet.keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519', kid: p.kid, use: 'sig', alg: 'EdDSA' });
    expect(Object.keys(JSON.parse(keySetText).keys[0]).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x']);
    expect((await stat(p.keySetFile)).isFile()).toBe(true);
  });

  it('every record passes recordSchema and verifies against the published key set', () => {
    for (const [domain, { record }] of records) {
      const parsed = recordSchema.safeParse(record);
      expect(parsed.success, `${domain}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
      expect(verifyRecordNode(record, keySet), domain).toEqual({ valid: true, keyId: p.kid });
      expect(record).toMatchObject({ schema: SCHEMA_URL, issuer: ISSUER, issued_at: NOW_ISO, max_score: 100, key_id: p.kid });
    }
  });

  it('a record changed by one byte no longer verifies (the signature covers the content)', () => {
    const r = { ...rec('acme-outdoor.example'), score: 93.6 };
    expect(verifyRecordNode(r, keySet)).toMatchObject({ valid: false, code: 'BAD_SIGNATURE' });
  });

  it('reduces URLs and subdomains to the registrable domain', () => {
    expect(rec('bluebird-books.example')).toMatchObject({ domain: 'bluebird-books.example', tier: 'gold', score: 86 });
    expect(records.has('www.bluebird-books.example')).toBe(false);
    expect(rec('corner-bakery.example').domain).toBe('corner-bakery.example');
    expect(rec('example.co.uk')).toMatchObject({ score: 88, tier: 'gold' }); // www.northwind-traders.example.co.uk
    expect(rec('example.com.au')).toMatchObject({ score: 53, tier: 'silver' }); // outlet.southwind-goods.example.com.au:8443
  });

  it('stores IDN domains in A-label form and keeps private-suffix hosts', () => {
    const buecher = normalizeDomain('bücher-haus.example');
    expect(buecher).toMatch(/^xn--bcher-haus-[a-z0-9]+\.example$/);
    expect(rec(buecher)).toMatchObject({ domain: buecher, score: 77, tier: 'silver' });
    expect(tree.get(buecher)!.rel).toBe(recordPath(buecher));
    const cafe = normalizeDomain('https://shop.Café-Olé.example/menu');
    expect(cafe).toMatch(/^xn--caf-ol-[a-z0-9]+\.example$/);
    expect(rec(cafe).score).toBe(58);
    expect(rec('fictional-candles.myshopify.com')).toMatchObject({ domain: 'fictional-candles.myshopify.com', tier: 'silver' });
    expect(rec('tiny-knits.github.io')).toMatchObject({ domain: 'tiny-knits.github.io', tier: 'bronze' });
    expect(rec('single-file-shop.example')).toMatchObject({ score: 91, tier: 'gold' });
  });

  it('derives tiers at the boundaries', () => {
    expect(rec('tier-boundary-80.example')).toMatchObject({ status: 'verified', tier: 'gold', score: 80 });
    expect(rec('tier-boundary-79.example')).toMatchObject({ status: 'verified', tier: 'silver', score: 79.99 });
    expect(rec('tier-boundary-50.example').tier).toBe('silver');
    expect(rec('tier-boundary-49.example').tier).toBe('bronze');
    expect(rec('tier-boundary-1.example').tier).toBe('bronze');
    expect(rec('tier-boundary-0-99.example')).toMatchObject({ status: 'verified', tier: null, score: 0.99 });
    expect(rec('tier-boundary-0.example')).toMatchObject({ status: 'verified', tier: null, score: 0 });
  });

  it('rounds sub-scores to whole numbers', () => {
    expect(rec('tier-boundary-79.example').sub_scores).toEqual({ visibility: 80, recommendation_rate: 80, technical_readiness: 79 });
    expect(rec('tier-boundary-49.example').sub_scores).toEqual({ visibility: 50, recommendation_rate: 49, technical_readiness: 51 });
    expect(rec('acme-outdoor.example').sub_scores).toEqual({ visibility: 95, recommendation_rate: 91, technical_readiness: 89 });
  });

  it('marks thin evidence provisional with the thin_evidence flag and no tier', () => {
    expect(rec('quiet-pottery.example')).toMatchObject({ status: 'provisional', tier: null, score: null, flags: ['thin_evidence'] });
    expect(rec('sparse-signals.example')).toMatchObject({ status: 'provisional', tier: null, score: 84, flags: ['thin_evidence'] });
    // Blockers pass through as given, objects included.
    expect((rec('sparse-signals.example').evidence as { blockers: unknown }).blockers).toEqual([
      { engine: 'gemini', kind: 'rate_limited' },
    ]);
    // The auditor's flags are kept, thin_evidence added, sorted.
    expect(rec('new-arrival.example').flags).toEqual(['missing_signal:reviews', 'thin_evidence']);
    expect(rec('indigo-apparel.example').flags).toEqual(['missing_signal:reviews', 'missing_signal:structured_data']);
  });

  it('marks flagged merchants flagged, whatever the evidence', () => {
    expect(rec('dubious-deals.example')).toMatchObject({
      status: 'flagged',
      tier: null,
      score: null,
      flags: ['missing_signal:contact_page'],
    });
    expect(rec('knockoff-watches.example')).toMatchObject({ status: 'flagged', tier: null, flags: ['thin_evidence'] });
    expect(rec('counterfeit-sneakers.example')).toMatchObject({ status: 'flagged', score: 15 });
  });

  it('writes timestamps in UTC with milliseconds and next_audit_at one calendar month on, clamped', () => {
    expect(rec('month-end-clamp.example')).toMatchObject({
      last_audited_at: '2026-01-31T18:45:30.250Z',
      next_audit_at: '2026-02-28T18:45:30.250Z',
      first_seen: '2025-03-14T09:30:00.000Z',
    });
    expect(rec('leap-year-clamp.example').next_audit_at).toBe('2024-02-29T06:00:00.000Z');
    expect(rec('year-end.example')).toMatchObject({
      last_audited_at: '2025-12-15T11:00:00.000Z',
      next_audit_at: '2026-01-15T11:00:00.000Z',
    });
    expect(rec('greenleaf-tea.example')).toMatchObject({
      last_audited_at: '2026-01-31T07:00:00.000Z',
      next_audit_at: '2026-02-28T07:00:00.000Z',
    });
    expect(rec('lumen-lighting.example').next_audit_at).toBe('2026-04-30T10:00:00.000Z');
    expect(rec('bluebird-books.example').next_audit_at).toBe('2026-09-30T23:15:00.000Z');
  });
});
