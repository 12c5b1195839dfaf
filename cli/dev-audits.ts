import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { formatTimestamp, parseTimestamp } from '#shared';
import { listAuditFiles } from '../builder/inputs.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

/** How long ago `mvr dev` makes the typical sample audit: recent, yet not "today". */
export const DEV_AUDIT_AGE_DAYS = 3;

export interface DatedAudits {
  /** Whole days every audit's dates moved (negative: earlier). */
  shiftDays: number;
  audits: number;
  /** How many whole days before `now` the typical (median) audit now is. */
  ageDays: number;
}

/**
 * Writes into `into` a copy of the audits folder with every audit's `first_seen` and
 * `last_audited_at` moved by the same whole number of days, so that the median audit was made
 * {@link DEV_AUDIT_AGE_DAYS} days before `now`, or earlier when that would date an audit after `now`. The sample audits carry fixed dates; built as they
 * are, they read as overdue a few weeks after they were written. One shift keeps their spacing
 * (and the edge cases some of them are dated to show, a month end or a leap day, land elsewhere:
 * these are a development build's records, never a test's). A file that does not parse is copied
 * unchanged, for the build to report.
 */
export async function writeDatedAudits(auditsDir: string, into: string, now: number): Promise<DatedAudits> {
  const files = await Promise.all(
    (await listAuditFiles(auditsDir)).map(async ({ path }) => {
      const text = await readFile(path, 'utf8');
      return { rel: relative(auditsDir, path), text, audits: parseAudits(path, text) };
    }),
  );
  const all = files.flatMap((f) => f.audits ?? []);
  const audited = datesOf(all, 'last_audited_at');
  const median = audited[Math.floor(audited.length / 2)];
  // The latest date of any audit lands no later than now: the build refuses an audit dated in the future.
  const latest = Math.max(...audited, ...datesOf(all, 'first_seen'));
  const shiftDays =
    median === undefined
      ? 0
      : Math.min(Math.round((now - DEV_AUDIT_AGE_DAYS * DAY_MS - median) / DAY_MS), Math.floor((now - latest) / DAY_MS));
  let count = 0;
  for (const f of files) {
    let text = f.text;
    if (f.audits) {
      for (const audit of f.audits) shiftDates(audit, shiftDays * DAY_MS);
      count += f.audits.length;
      text = f.rel.endsWith('.jsonl')
        ? `${f.audits.map((a) => JSON.stringify(a)).join('\n')}\n`
        : JSON.stringify(f.audits.length === 1 && !f.text.trimStart().startsWith('[') ? f.audits[0] : f.audits, null, 2);
    }
    await mkdir(dirname(join(into, f.rel)), { recursive: true });
    await writeFile(join(into, f.rel), text);
  }
  return { shiftDays, audits: count, ageDays: median === undefined ? 0 : Math.round((now - median) / DAY_MS) - shiftDays };
}

type AuditObject = Record<string, unknown>;

/** The audits' parseable dates of one member, ascending. */
function datesOf(audits: AuditObject[], member: string): number[] {
  return audits
    .map((a) => (typeof a[member] === 'string' ? parseTimestamp(a[member]) : null))
    .filter((t): t is number => t !== null)
    .sort((a, b) => a - b);
}

/** The audits of a file (a `.json` value or array, or a JSONL line each), or null when it does not parse as such. */
function parseAudits(path: string, text: string): AuditObject[] | null {
  try {
    const values: unknown[] = path.endsWith('.jsonl')
      ? text
          .split('\n')
          .filter((l) => l.trim() !== '')
          .map((l) => JSON.parse(l) as unknown)
      : ([] as unknown[]).concat(JSON.parse(text) as unknown);
    return values.every((v) => typeof v === 'object' && v !== null && !Array.isArray(v)) ? (values as AuditObject[]) : null;
  } catch {
    return null;
  }
}

function shiftDates(audit: AuditObject, ms: number): void {
  for (const member of ['first_seen', 'last_audited_at']) {
    const t = typeof audit[member] === 'string' ? parseTimestamp(audit[member]) : null;
    if (t !== null) audit[member] = formatTimestamp(t + ms);
  }
}
