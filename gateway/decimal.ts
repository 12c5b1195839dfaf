import { writeLatin1 } from '../core/latin1.ts';

// Counts as decimal text or bytes, for the numbers in answers (quota counters, Retry-After,
// Content-Length of a body written in place).

const DIGITS = Array.from({ length: 1000 }, (_, i) => String(i));
const DIGITS_PADDED = DIGITS.map((text) => text.padStart(3, '0'));

/**
 * A count as decimal text, from three-digit groups made once. V8 keeps the text of every number
 * it converts in a cache that holds on to it, so a count that differs on every request (the
 * requests left under a large quota) left one string a request to outlive the young generation:
 * garbage in the old one, and a major collection or two a second under load (sampling heap
 * profile). Exact for integers from 0 to 2^53 - 1; anything else is written as JavaScript
 * writes it.
 */
export function decimal(n: number): string {
  if (!Number.isSafeInteger(n) || n < 0) return String(n);
  if (n < 1000) return DIGITS[n]!;
  let text = DIGITS_PADDED[n % 1000]!;
  for (n = Math.floor(n / 1000); n >= 1000; n = Math.floor(n / 1000)) text = DIGITS_PADDED[n % 1000]! + text;
  return DIGITS[n]! + text;
}

/** Digits of a count as {@link decimal} writes it (anything but a safe non-negative integer through its text). */
export function digitCount(n: number): number {
  if (!Number.isSafeInteger(n) || n < 0) return decimal(n).length;
  let count = 1;
  for (let rest = n; rest >= 10; rest = Math.floor(rest / 10)) count++;
  return count;
}

/** Writes a count's {@link digitCount} digits at `at`; returns the offset after them. */
export function writeDigits(out: Uint8Array, at: number, n: number): number {
  if (!Number.isSafeInteger(n) || n < 0) return writeLatin1(out, at, decimal(n));
  const end = at + digitCount(n);
  let i = end;
  do {
    out[--i] = 48 + (n % 10);
    n = Math.floor(n / 10);
  } while (n > 0);
  return end;
}
