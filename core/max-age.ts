import { UsageError } from './errors.ts';

// A maximum age of cosignatures, as every edge takes it: `mvr verify --max-age`, the MCP tools' `max_age`.

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** A maximum age: a whole number and a unit, s, m, h or d (36h, 90m, 2d), in ms; INVALID_USAGE naming `flag` otherwise. */
export function parseMaxAge(value: string, flag = '--max-age'): number {
  const m = /^([1-9][0-9]{0,5})([smhd])$/.exec(value);
  if (!m) throw new UsageError(`${flag} "${value}": must be a duration such as 36h, 90m or 2d (a whole number, then s, m, h or d)`);
  return Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
}
