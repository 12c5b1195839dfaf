import { MvrError } from '../core/errors.ts';
import { decimal, digitCount, writeDigits } from './decimal.ts';

/** The caller used up its quota; `retryAfterSeconds` says when the window resets. */
export class RateLimitedError extends MvrError {
  constructor(message: string, readonly decision: RateDecision) {
    super('RATE_LIMITED', message);
  }
}

export interface RateDecision {
  allowed: boolean;
  /** Requests left in the current window. */
  remaining: number;
  /** Seconds until the window resets (>= 1). */
  resetSeconds: number;
  /** The policy: name, quota and window. */
  policy: { name: string; quota: number; windowSeconds: number };
}

/**
 * Fixed-window counters, one per caller (API key id, or client address for requests without a
 * valid key). A window starts at a caller's first request; memory is bounded by `maxCallers`
 * (expired windows are dropped first, then the oldest).
 */
export class FixedWindowLimiter {
  private windows = new Map<string, { start: number; count: number }>();
  /** One policy object for every decision (its header text is derived once from it). */
  readonly policy: RateDecision['policy'];

  constructor(
    readonly name: string,
    readonly quota: number,
    readonly windowSeconds: number,
    private readonly maxCallers = 100_000,
    private readonly now: () => number = Date.now,
  ) {
    this.policy = Object.freeze({ name, quota, windowSeconds });
  }

  /** Counts one request for `caller` at `now` (epoch ms; the limiter's own clock by default) and says whether it is within the quota. */
  take(caller: string, now = this.now()): RateDecision {
    const windowMs = this.windowSeconds * 1000;
    let w = this.windows.get(caller);
    if (!w || now - w.start >= windowMs) {
      if (!w && this.windows.size >= this.maxCallers) this.evict(now);
      w = { start: now, count: 0 };
      this.windows.set(caller, w);
    }
    w.count++;
    return {
      allowed: w.count <= this.quota,
      remaining: Math.max(0, this.quota - w.count),
      resetSeconds: Math.max(1, Math.ceil((w.start + windowMs - now) / 1000)),
      policy: this.policy,
    };
  }

  private evict(now: number): void {
    const windowMs = this.windowSeconds * 1000;
    for (const [caller, w] of this.windows) if (now - w.start >= windowMs) this.windows.delete(caller);
    // Still full: drop the oldest tenth (Map keeps insertion order).
    if (this.windows.size >= this.maxCallers) {
      let n = Math.ceil(this.maxCallers / 10);
      for (const caller of this.windows.keys()) {
        if (n-- <= 0) break;
        this.windows.delete(caller);
      }
    }
  }
}

/**
 * The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers, structured-field form), as a
 * flat name/value list: `RateLimit-Policy: "per-key";q=6000;w=60` and
 * `RateLimit: "per-key";r=5999;t=42`.
 */
export function rateLimitFields(d: RateDecision): string[] {
  return ['ratelimit-policy', rateLimitPolicyField(d.policy), 'ratelimit', rateLimitField(d)];
}

/**
 * The same two fields as the header lines a writer of raw bytes puts out (the fast lane):
 * `ratelimit-policy: <policy field>\r\nratelimit: <field>\r\n`, byte for byte what
 * {@link rateLimitFields} gives through Node's writeHead. The text up to the first count is kept
 * per policy as bytes and the two counts are written as digits, so no string is made per
 * request: the strings of the counts, their concatenation and its copy had cost a hot request
 * about a microsecond (its CPU time with the quota on and off, alternating).
 */
export function rateLimitLinesLength(d: RateDecision): number {
  return linesPrefix(d.policy).length + digitCount(d.remaining) + 3 + digitCount(d.resetSeconds) + 2;
}

/** Writes {@link rateLimitLinesLength} bytes at `at`; returns the offset after them. */
export function writeRateLimitLines(out: Buffer, at: number, d: RateDecision): number {
  const prefix = linesPrefix(d.policy);
  out.set(prefix, at);
  at = writeDigits(out, at + prefix.length, d.remaining);
  out[at++] = 59; // ;
  out[at++] = 116; // t
  out[at++] = 61; // =
  at = writeDigits(out, at, d.resetSeconds);
  out[at++] = 13;
  out[at++] = 10;
  return at;
}

const linesPrefixes = new WeakMap<RateDecision['policy'], Buffer>();
function linesPrefix(policy: RateDecision['policy']): Buffer {
  let prefix = linesPrefixes.get(policy);
  if (prefix === undefined) linesPrefixes.set(policy, (prefix = Buffer.from(`ratelimit-policy: ${rateLimitPolicyField(policy)}\r\nratelimit: "${policy.name}";r=`, 'latin1')));
  return prefix;
}

/** The `RateLimit` field of a decision. */
export function rateLimitField(d: RateDecision): string {
  return `"${d.policy.name}";r=${decimal(d.remaining)};t=${decimal(d.resetSeconds)}`;
}

const policyFields = new WeakMap<RateDecision['policy'], string>();
/** The `RateLimit-Policy` field of a policy, made once per policy. */
export function rateLimitPolicyField(policy: RateDecision['policy']): string {
  let field = policyFields.get(policy);
  if (field === undefined) policyFields.set(policy, (field = `"${policy.name}";q=${policy.quota};w=${policy.windowSeconds}`));
  return field;
}
