/**
 * The verify functions' options, checked at the door. A caller in plain JavaScript can pass
 * anything: a maximum age of `NaN` or `'36h'` would compare false against every cosignature's age
 * and let an old one count, and a `now` that is not a number would reach BigInt arithmetic. So each
 * option is read here once, into a value the checks can trust, or refused with an
 * InvalidArgumentError naming it: misuse is never a pass and never a raw TypeError.
 */
import { InvalidArgumentError } from './errors.ts';
import type { NoteVerifierKey } from './tlog/note.ts';
import type { TlogPolicy } from './tlog/policy.ts';

/**
 * A value a caller passed, for a message: never throws, whatever it is (a BigInt, an object whose
 * `toString` is not a function), so that describing misuse cannot itself fail uncoded. Text is
 * quoted unless `quoted` is false.
 */
export function shown(value: unknown, quoted = true): string {
  if (typeof value === 'string' && !quoted) return value;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'an invalid Date' : value.toISOString();
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) return String(value);
  if (typeof value === 'bigint') return `${value.toString()}n`;
  try {
    const text = JSON.stringify(value);
    if (text !== undefined) return text.length > 80 ? `${text.slice(0, 77)}...` : text;
  } catch {}
  return `a ${typeof value}`;
}

/**
 * The clock: epoch milliseconds (a finite number) or a valid Date; `Date.now()` when not given.
 * A Date is taken because `now: new Date()` is what a caller writes first.
 */
export function clockOf(now: unknown, name = 'options.now'): number {
  if (now === undefined) return Date.now();
  if (typeof now === 'number' && Number.isFinite(now)) return now;
  if (now instanceof Date && Number.isFinite(now.getTime())) return now.getTime();
  throw new InvalidArgumentError(name, `must be a time: epoch milliseconds (a finite number) or a valid Date, not ${shown(now)}`);
}

/** The maximum age of cosignatures: a finite, positive number of milliseconds, or none. */
export function maxAgeOf(maxAgeMs: unknown, name = 'options.maxAgeMs'): number | undefined {
  if (maxAgeMs === undefined) return undefined;
  if (typeof maxAgeMs === 'number' && Number.isFinite(maxAgeMs) && maxAgeMs > 0) return maxAgeMs;
  throw new InvalidArgumentError(
    name,
    `must be a finite, positive number of milliseconds (36 hours is 129600000), not ${typeof maxAgeMs === 'number' ? maxAgeMs : shown(maxAgeMs)}`,
  );
}

/** A witness policy as `parsePolicy` returns it, or none. Its text is not a policy: it must be parsed (and refused line by line) first. */
export function policyOf(policy: unknown, name = 'options.policy'): TlogPolicy | undefined {
  if (policy === undefined) return undefined;
  const p = policy as Partial<TlogPolicy> | null;
  if (typeof p === 'object' && p !== null && Array.isArray(p.logs) && Array.isArray(p.witnesses) && p.quorum !== undefined)
    return p as TlogPolicy;
  throw new InvalidArgumentError(name, 'must be a policy as parsePolicy returns it (pass the text of a policy file through parsePolicy)');
}

/** An options argument: an object, or none. */
export function optionsOf<T extends object>(options: unknown, name = 'options'): Partial<T> {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object' || Array.isArray(options)) throw new InvalidArgumentError(name, 'must be an object');
  return options as Partial<T>;
}

/** `asOfBuild`: the id of the kept build an answer was asked about (`build=`), or none. */
export function asOfBuildOf(build: unknown, name = 'options.asOfBuild'): string | undefined {
  if (build === undefined) return undefined;
  if (typeof build === 'string' && build !== '') return build;
  throw new InvalidArgumentError(name, `must be a build id (the build= asked for), not ${shown(build)}`);
}

/** A string argument (a domain, a proof's text). */
export function stringOf(value: unknown, name: string): string {
  if (typeof value !== 'string') throw new InvalidArgumentError(name, `must be a string, not ${value === null ? 'null' : typeof value}`);
  return value;
}

/** The log one trusts, read: its verifier key (text, or a key already parsed) and the origin, when given. */
export function logTrustOf(log: unknown, name: string): { vkey: string | NoteVerifierKey; origin?: string } {
  if (typeof log !== 'object' || log === null)
    throw new InvalidArgumentError(name, "must be an object with the log's verifier key, { vkey }");
  const { vkey, origin } = log as { vkey?: unknown; origin?: unknown };
  const parsed = vkey as Partial<NoteVerifierKey> | null;
  const isKey =
    typeof parsed === 'object' &&
    parsed !== null &&
    typeof parsed.name === 'string' &&
    typeof parsed.id === 'number' &&
    parsed.publicKey instanceof Uint8Array;
  if (typeof vkey !== 'string' && !isKey)
    throw new InvalidArgumentError(
      `${name}.vkey`,
      vkey === undefined
        ? "is missing: a log is checked with its verifier key (the issuer's /.well-known/merchant-verify-log.vkey)"
        : 'must be the log\'s note verifier key, "<name>+<key ID>+<key>"',
    );
  if (origin !== undefined && typeof origin !== 'string') throw new InvalidArgumentError(`${name}.origin`, 'must be a string');
  return origin === undefined ? { vkey: vkey as string | NoteVerifierKey } : { vkey: vkey as string | NoteVerifierKey, origin };
}

/** The witness options every proof takes (`policy`, `maxAgeMs`, `now`, `trustedCheckpoint`), read once. */
export interface WitnessSettings {
  policy: TlogPolicy | undefined;
  maxAgeMs: number | undefined;
  now: number;
  /** A checkpoint note the caller trusts; opened with the log's key where a proof is checked. */
  trustedCheckpoint?: string;
}

/** Reads `{ policy, maxAgeMs, now }` from an options object, refusing what is not one of them. */
export function witnessSettingsOf(
  options: { policy?: unknown; maxAgeMs?: unknown; now?: unknown; trustedCheckpoint?: unknown },
  prefix = 'options',
): WitnessSettings {
  const settings: WitnessSettings = {
    policy: policyOf(options.policy, `${prefix}.policy`),
    maxAgeMs: maxAgeOf(options.maxAgeMs, `${prefix}.maxAgeMs`),
    now: clockOf(options.now, `${prefix}.now`),
  };
  if (options.trustedCheckpoint !== undefined)
    settings.trustedCheckpoint = stringOf(options.trustedCheckpoint, `${prefix}.trustedCheckpoint`);
  // A maximum age is of cosignatures, which only a policy asks for: alone it would be a check asked for and never run.
  if (settings.maxAgeMs !== undefined && settings.policy === undefined)
    throw new InvalidArgumentError(
      `${prefix}.maxAgeMs`,
      `is the age of cosignatures, checked under a witness policy: give ${prefix}.policy too`,
    );
  return settings;
}

/**
 * What the checks of an answer's build statement take (its log proof, its witnesses, its currency),
 * the same for every answer that carries a statement: a prefix answer, a bundle.
 */
export interface StatementCheckInput {
  /** The log's note verifier key: the statement must be proven in the log by the answer's `statement_proof`. */
  log?: { vkey: string };
  /** A tlog-policy (`parsePolicy`): the statement proof's checkpoint must be cosigned by its quorum (implies the log check). */
  policy?: TlogPolicy;
  /** With `policy`: cosignatures older than this many ms do not count. */
  maxAgeMs?: number;
  /** The time the answer is verified as of: epoch ms or a Date (default now). Staleness and cosignature ages are counted from it. */
  now?: number | Date;
  /** A checkpoint note the caller saved and trusts: the statement proof's checkpoint must be of its origin and no smaller (implies the log check). */
  trustedCheckpoint?: string;
}
