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
 * valid key). A window starts at a caller's first request; memory is bounded by `maxCallers`
 * (expired windows are dropped first, then the oldest).
 */
export class FixedWindowLimiter {
  private windows = new Map<string, { start: number; count: number }>();
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

  /** Counts `count` requests for `caller` at `now` (epoch ms; the limiter's own clock by default) and says whether they are within the quota. */
  take(caller: string, count = 1, now = this.now()): RateDecision {
    const windowMs = this.windowSeconds * 1000;
    let w = this.windows.get(caller);
    if (!w || now - w.start >= windowMs) {
      if (!w && this.windows.size >= this.maxCallers) this.evict(now);
      w = { start: now, count: 0 };
      this.windows.set(caller, w);
    }
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
 * The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers, structured-field form):
 * `RateLimit-Policy: "per-key";q=6000;w=60` and `RateLimit: "per-key";r=5999;t=42`.
 */
export function rateLimitHeaders(d: RateDecision): Record<string, string> {
  return { 'ratelimit-policy': rateLimitPolicyField(d.policy), ratelimit: rateLimitField(d) };
}

/** The `RateLimit` field of a decision. */
export function rateLimitField(d: RateDecision): string {
  return `"${d.policy.name}";r=${d.remaining};t=${d.resetSeconds}`;
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
