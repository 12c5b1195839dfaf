/**
 * The portable verifier's staleness of a record the real build signed, judged against a fixed
 * clock: current, overdue (yet still valid: records never expire) or never audited.
 */

import type { KeySet } from '@merchant-verify/verifier';
import { stalenessOf, verifyRecord } from '@merchant-verify/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup } from '../support/gateway.ts';
import { liveRecord, publishedKeySet, type StoredRecord } from '../support/outputs.ts';
import { GOLD, makeProject, NOW, type Project } from '../support/project.ts';

let signed: Project;
let keySet: KeySet;
let gold: StoredRecord;

beforeAll(async () => {
  signed = await makeProject();
  keySet = (await publishedKeySet(signed)).keySet;
  gold = await liveRecord(signed, GOLD);
});
afterAll(cleanup);

describe('staleness (fixed now)', () => {
  const day = 86_400_000;
  // acme-outdoor.example: last audited 2026-10-15T12:00Z, next audit 2026-11-15T12:00Z.
  const last = Date.parse('2026-10-15T12:00:00.000Z');
  const next = Date.parse('2026-11-15T12:00:00.000Z');

  it('the record carries the audit timestamps the staleness is judged from', () => {
    expect(gold.record.last_audited_at).toBe('2026-10-15T12:00:00.000Z');
    expect(gold.record.next_audit_at).toBe('2026-11-15T12:00:00.000Z');
  });

  it('is current before next_audit_at, with its age in whole days', () => {
    const r = verifyRecord(gold.record, keySet, { now: NOW });
    expect(r.valid).toBe(true);
    expect(r.staleness).toEqual({
      state: 'current',
      lastAuditedAt: '2026-10-15T12:00:00.000Z',
      nextAuditAt: '2026-11-15T12:00:00.000Z',
      ageDays: 16,
      overdueDays: 0,
    });
    expect(verifyRecord(gold.record, keySet, { now: next }).staleness.state).toBe('current');
    expect(verifyRecord(gold.record, keySet, { now: last }).staleness).toMatchObject({ state: 'current', ageDays: 0 });
  });

  it('is overdue after next_audit_at, yet the signature stays valid (records never expire)', () => {
    const r = verifyRecord(gold.record, keySet, { now: Date.parse('2026-12-01T00:00:00.000Z') });
    expect(r.valid).toBe(true);
    expect(r.staleness).toMatchObject({ state: 'overdue', ageDays: 46, overdueDays: 15 });
    expect(verifyRecord(gold.record, keySet, { now: next + 1 }).staleness).toMatchObject({ state: 'overdue', overdueDays: 0 });
    const yearLater = verifyRecord(gold.record, keySet, { now: last + 400 * day });
    expect(yearLater).toMatchObject({ valid: true, staleness: { state: 'overdue', ageDays: 400 } });
  });

  it('is never_audited for a record without audit timestamps (the never-audited answer)', () => {
    const answer: Record<string, unknown> = {
      ...gold.record,
      status: 'unverified',
      last_audited_at: null,
      next_audit_at: null,
      first_seen: null,
    };
    delete answer.key_id;
    delete answer.signature;
    const r = verifyRecord(answer, keySet, { now: NOW });
    expect(r).toMatchObject({ valid: false, code: 'UNSIGNED', status: 'unverified' });
    expect(r.staleness).toEqual({ state: 'never_audited', lastAuditedAt: null, nextAuditAt: null, ageDays: null, overdueDays: null });
    expect(stalenessOf({}, NOW).state).toBe('never_audited');
  });

  it('uses the clock when no now is given', () => {
    const expected = stalenessOf(gold.record, Date.now());
    expect(verifyRecord(gold.record, keySet).staleness.state).toBe(expected.state);
  });
});
