/** 9998-12-01T00:00:00Z: one month later is still a four-digit year. */
const MAX_TIMESTAMP = Date.UTC(9998, 11, 1);

/** ISO 8601 with `Z` or an offset; fractions of any length (kept to the millisecond). */
const ISO = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Parses an ISO 8601 timestamp that names its zone (`Z` or `+hh:mm`), rejecting dates that do
 * not exist (Feb 30, hour 24). Returns epoch milliseconds, or `null` when the text is invalid.
 */
export function parseTimestamp(text: string): number | null {
  const m = ISO.exec(text);
  if (!m) return null;
  const [, y, mo, d, h, mi, s, frac = '', zone] = m as unknown as string[];
  const year = Number(y),
    month = Number(mo),
    day = Number(d);
  const hour = Number(h),
    minute = Number(mi),
    second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month - 1)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const ms = Number(frac.padEnd(3, '0').slice(0, 3));
  let offset = 0;
  if (zone !== 'Z') {
    const oh = Number(zone!.slice(1, 3)),
      om = Number(zone!.slice(4, 6));
    if (oh > 23 || om > 59) return null;
    offset = (zone!.startsWith('-') ? -1 : 1) * (oh * 60 + om) * 60_000;
  }
  const t = Date.UTC(year, month - 1, day, hour, minute, second, ms) - offset;
  // Records hold four-digit UTC years, and next_audit_at is a month later: outside 1970..9998
  // (after the offset is applied) the derived timestamps could not be written in that form.
  return t < 0 || t >= MAX_TIMESTAMP ? null : t;
}

/** Formats epoch milliseconds as `YYYY-MM-DDTHH:mm:ss.sssZ`, the only timestamp form in a record. */
export function formatTimestamp(ms: number): string {
  const t = new Date(ms);
  const year = t.getUTCFullYear();
  // Date#toISOString formats through printf in V8, and a build formats three timestamps a record;
  // the same text from the date's fields costs a third. Other years (and invalid dates, which
  // throw) keep toISOString's own form.
  if (!(year >= 1000 && year <= 9999)) return t.toISOString();
  const ms3 = t.getUTCMilliseconds();
  return `${year}-${two(t.getUTCMonth() + 1)}-${two(t.getUTCDate())}T${two(t.getUTCHours())}:${two(t.getUTCMinutes())}:${two(t.getUTCSeconds())}.${ms3 < 10 ? '00' : ms3 < 100 ? '0' : ''}${ms3}Z`;
}

function two(n: number): string {
  return n < 10 ? `0${n}` : `${n}`;
}

/**
 * Adds one calendar month, clamping to the last day of the target month and keeping the time
 * of day: Jan 31 -> Feb 28 (or 29), Mar 31 -> Apr 30, Dec 15 -> Jan 15 of the next year.
 */
export function addOneMonth(ms: number): number {
  const d = new Date(ms);
  const y = d.getUTCFullYear(),
    m = d.getUTCMonth();
  const ty = m === 11 ? y + 1 : y,
    tm = (m + 1) % 12;
  const day = Math.min(d.getUTCDate(), daysInMonth(ty, tm));
  return Date.UTC(ty, tm, day, d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds());
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Days in a month of the (proleptic) Gregorian calendar; `month0` is 0-based. */
export function daysInMonth(year: number, month0: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return month0 === 1 && leap ? 29 : MONTH_DAYS[month0]!;
}
