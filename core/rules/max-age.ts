import { UsageError } from '../errors/errors.ts';
import { DURATION_FORM, parseDuration } from './duration.ts';

// A maximum age of cosignatures, as every edge takes it: `mvr verify --max-age`, the MCP tools' `max_age`.

/** A maximum age in ms, in the one duration syntax (core/rules/duration.ts); INVALID_USAGE naming `flag` otherwise. */
export function parseMaxAge(value: string, flag = '--max-age'): number {
  const ms = parseDuration(value);
  if (ms === null) throw new UsageError(`${flag} "${value}": must be ${DURATION_FORM}`);
  return ms;
}
