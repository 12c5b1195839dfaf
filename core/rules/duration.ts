/**
 * A duration as the project writes one everywhere a person types it (`mvr verify --max-age`, the
 * verify page's maximum age): a whole number, then its unit, s, m, h or d. A bare number is refused
 * rather than guessed at: "36" could be hours on one screen and seconds on another.
 */

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** What a duration looks like, for a message that refuses one. */
export const DURATION_FORM = 'a duration such as 36h, 90m or 2d (a whole number, then s, m, h or d)';

/**
 * The duration `text` in ms, or null when it is not one.
 *
 * @example parseDuration('36h') // 129_600_000
 * @example parseDuration('36') // null
 */
export function parseDuration(text: string): number | null {
  const m = /^([1-9][0-9]{0,5})([smhd])$/.exec(text);
  return m ? Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS] : null;
}
