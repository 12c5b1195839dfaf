export interface RateDecision {
  allowed: boolean;
  /** Requests left in the current window. */
  remaining: number;
  /** Seconds until the window resets (>= 1). */
  resetSeconds: number;
  /** The policy: name, quota and window. */
  policy: { name: string; quota: number; windowSeconds: number };
}

/** A quota: the local {@link FixedWindowLimiter}, or one shared by every gateway through Redis. */
export interface RateLimiter {
  readonly policy: RateDecision['policy'];
  /** Requests refused since start (for metrics). */
  readonly refusals: number;
  /** Counts `count` requests (a batch counts each of its domains) and says whether they are within the quota. */
  take(caller: string, count?: number): RateDecision | Promise<RateDecision>;
}

/**
 * Fixed-window counters, one per caller (API key id, or client address for requests without a
 * valid key). A window starts at a caller's first request. Memory is bounded by `maxCallers`, and
 * a counter is never dropped before its window has ended: dropping live ones (the oldest, say)
 * would let anyone with enough addresses reset another's count, or their own, by showing many
 * new callers. When every counter is live, a new caller is counted in one overflow counter that
 * all such callers share, with the same quota: a flood of new callers then refuses itself, and
 * callers already counted keep their own counts.
 */
export class FixedWindowLimiter {
  // In the order their windows started (a restarted window moves to the end), so expired ones are found at the front.
  private windows = new Map<string, { start: number; count: number }>();
  private overflow = { start: -Infinity, count: 0 };
  readonly policy: RateDecision['policy'];
  refusals = 0;

  constructor(
    readonly name: string,
    readonly quota: number,
    readonly windowSeconds: number,
    private readonly maxCallers = 100_000,
    private readonly now: () => number = Date.now,
  ) {
    this.policy = Object.freeze({ name, quota, windowSeconds });
  }

  /** How many callers have counters of their own now (at most `maxCallers`). */
  get callers(): number {
    return this.windows.size;
  }

  /** Counts `count` requests for `caller` at `now` (epoch ms; the limiter's own clock by default) and says whether they are within the quota. */
  take(caller: string, count = 1, now = this.now()): RateDecision {
    const windowMs = this.windowSeconds * 1000;
    const w = this.windowOf(caller, now, windowMs);
    // A refused take costs nothing (as in the shared limiter): a batch too big for what is left
    // leaves it for smaller requests.
    const allowed = w.count + count <= this.quota;
    if (allowed) w.count += count;
    else this.refusals++;
    return {
      allowed,
      remaining: Math.max(0, this.quota - w.count),
      resetSeconds: Math.max(1, Math.ceil((w.start + windowMs - now) / 1000)),
      policy: this.policy,
    };
  }

  private windowOf(caller: string, now: number, windowMs: number): { start: number; count: number } {
    const w = this.windows.get(caller);
    if (w && now - w.start < windowMs) return w;
    if (w) this.windows.delete(caller);
    else if (this.windows.size >= this.maxCallers) {
      for (const [c, old] of this.windows) {
        if (now - old.start < windowMs) break;
        this.windows.delete(c);
      }
      if (this.windows.size >= this.maxCallers) {
        if (now - this.overflow.start >= windowMs) this.overflow = { start: now, count: 0 };
        return this.overflow;
      }
    }
    const fresh = { start: now, count: 0 };
    this.windows.set(caller, fresh);
    return fresh;
  }
}

/**
 * The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers, structured-field form):
 * `RateLimit-Policy: "per-key";q=6000;w=60` and `RateLimit: "per-key";r=5999;t=42`.
 */
export function rateLimitHeaders(d: RateDecision): Record<string, string> {
  return { 'ratelimit-policy': rateLimitPolicyField(d.policy), ratelimit: rateLimitField(d) };
}

/**
 * The `RateLimit` field of a decision. `remaining` (a whole number) is written with `toFixed(0)`,
 * the same digits as `String()`: `String()` and template literals go through V8's number-to-string
 * cache, a table in the old generation, and `remaining` is a new number on nearly every request, so
 * each one's text stayed in that table until promoted: about 32 bytes a request for the old
 * generation (a heap sampling profile, docs/benchmarks.md, "What a hot record promotes").
 */
export function rateLimitField(d: RateDecision): string {
  return `"${d.policy.name}";r=${d.remaining.toFixed(0)};t=${d.resetSeconds}`;
}

/** The `RateLimit-Policy` field of a policy; made once per policy (a limiter's is frozen), since every keyed answer carries it. */
export function rateLimitPolicyField(policy: RateDecision['policy']): string {
  let field = policyFields.get(policy);
  if (field === undefined) {
    field = `"${policy.name}";q=${policy.quota};w=${policy.windowSeconds}`;
    if (Object.isFrozen(policy)) policyFields.set(policy, field);
  }
  return field;
}
const policyFields = new WeakMap<RateDecision['policy'], string>();
