/** One duration syntax for the CLI's --max-age and the verify page: a whole number, then s, m, h or d. */
import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../core/rules/duration.ts';

describe('parseDuration', () => {
  it('reads a whole number and its unit', () => {
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('90m')).toBe(5_400_000);
    expect(parseDuration('36h')).toBe(129_600_000);
    expect(parseDuration('2d')).toBe(172_800_000);
  });
  it('refuses a bare number, a fraction, zero, a sign, spaces and other units', () => {
    for (const text of ['36', '1.5h', '0h', '-2d', ' 36h', '36 h', '36H', '2w', '', 'h', '1234567h'])
      expect(parseDuration(text), text).toBeNull();
  });
});
