import { InvalidArgumentError } from './errors.ts';
import { clockOf } from './options.ts';
import { parseTimestamp } from './time.ts';

/** How current a record is. Records never expire; they become stale. */
export interface Staleness {
  /** `current`: before next_audit_at; `overdue`: the monthly re-audit is late; `never_audited`: no audit timestamps. */
  state: 'current' | 'overdue' | 'never_audited';
  lastAuditedAt: string | null;
  nextAuditAt: string | null;
  /** Whole days since the last audit, or null. */
  ageDays: number | null;
  /** Whole days past next_audit_at (0 when not overdue), or null. */
  overdueDays: number | null;
}

const DAY = 86_400_000;

/** Staleness of a record at `now` (epoch ms or a Date; default now), from `last_audited_at` and `next_audit_at`. */
export function stalenessOf(record: { last_audited_at?: unknown; next_audit_at?: unknown }, at?: number | Date): Staleness {
  if (typeof record !== 'object' || record === null) throw new InvalidArgumentError('record', 'must be an object');
  const now = clockOf(at, 'now');
  const last = typeof record.last_audited_at === 'string' ? parseTimestamp(record.last_audited_at) : null;
  const next = typeof record.next_audit_at === 'string' ? parseTimestamp(record.next_audit_at) : null;
  if (last === null) {
    return { state: 'never_audited', lastAuditedAt: null, nextAuditAt: null, ageDays: null, overdueDays: null };
  }
  const overdue = next !== null && now > next;
  return {
    state: overdue ? 'overdue' : 'current',
    lastAuditedAt: record.last_audited_at as string,
    nextAuditAt: next === null ? null : (record.next_audit_at as string),
    ageDays: Math.max(0, Math.floor((now - last) / DAY)),
    overdueDays: overdue ? Math.floor((now - next!) / DAY) : 0,
  };
}
