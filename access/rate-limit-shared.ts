import { FixedWindowLimiter, type RateDecision } from './rate-limit.ts';
import type { RedisClient } from './redis.ts';

/**
 * Takes up to ARGV[1] requests from the window's count for one caller, never past the quota
 * (ARGV[2]); returns what it granted and the count after. Atomic, so gateways never grant the
 * same request twice.
 */
const LEASE_SCRIPT = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local grant = math.min(tonumber(ARGV[1]), tonumber(ARGV[2]) - used)
if grant <= 0 then return {0, used} end
used = redis.call('INCRBY', KEYS[1], grant)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {grant, used}`;

interface Lease {
  window: number;
  /** Requests granted to this gateway and not used yet. */
  tokens: number;
  /** The window's count across all gateways after the last grant. */
  used: number;
  /** The quota is used up for this window: refuse without asking Redis. */
  exhausted: boolean;
  pending: Promise<void> | null;
}

/**
 * One quota per caller across every gateway, counted in Redis in windows aligned to the clock.
 * A gateway takes requests from the shared count in leases (1% of the quota at a time) and
 * spends them locally, so Redis is asked once per lease, not per request; no request is ever
 * granted twice, and at most one unused lease per gateway is lost when a window ends (3% of
 * the quota with three gateways). While Redis cannot be reached, each gateway falls back to
 * its own count of the same quota (N gateways then allow up to N times it) and says so once.
 */
export class SharedWindowLimiter {
  readonly policy: RateDecision['policy'];
  private readonly leases = new Map<string, Lease>();
  private readonly leaseSize: number;
  private readonly local: FixedWindowLimiter;
  private degraded = false;
  private refusedHere = 0;

  constructor(
    private readonly redis: RedisClient,
    readonly name: string,
    readonly quota: number,
    readonly windowSeconds: number,
    private readonly onDegraded: (error: Error | null) => void = () => undefined,
    private readonly now: () => number = Date.now,
  ) {
    this.policy = Object.freeze({ name, quota, windowSeconds });
    this.leaseSize = Math.max(1, Math.floor(quota / 100));
    this.local = new FixedWindowLimiter(name, quota, windowSeconds, 100_000, now);
  }

  /** Requests refused since start, by the shared count or by the local one while Redis was away. */
  get refusals(): number {
    return this.refusedHere + this.local.refusals;
  }

  async take(caller: string, count = 1): Promise<RateDecision> {
    const now = this.now();
    const windowMs = this.windowSeconds * 1000;
    const window = Math.floor(now / windowMs);
    let lease = this.leases.get(caller);
    if (!lease || lease.window !== window) {
      if (this.leases.size >= 100_000) for (const [c, l] of this.leases) if (l.window !== window) this.leases.delete(c);
      lease = { window, tokens: 0, used: 0, exhausted: false, pending: null };
      this.leases.set(caller, lease);
    }
    for (;;) {
      const decide = (allowed: boolean): RateDecision => ({
        allowed,
        remaining: Math.max(0, this.quota - lease!.used + lease!.tokens),
        resetSeconds: Math.max(1, Math.ceil(((window + 1) * windowMs - now) / 1000)),
        policy: this.policy,
      });
      if (lease.tokens >= count) {
        lease.tokens -= count;
        return decide(true);
      }
      if (lease.exhausted) {
        this.refusedHere++;
        return decide(false);
      }
      try {
        const current = lease;
        await (lease.pending ??= this.renew(caller, current, count).finally(() => (current.pending = null)));
      } catch {
        return this.local.take(caller, count, now);
      }
    }
  }

  private async renew(caller: string, lease: Lease, wanted: number): Promise<void> {
    const key = `mvr:rate:${this.name}:${caller}:${lease.window}`;
    let reply: unknown;
    try {
      reply = await this.redis.eval(LEASE_SCRIPT, {
        keys: [key],
        arguments: [String(Math.max(this.leaseSize, wanted - lease.tokens)), String(this.quota), String(this.windowSeconds * 2000)],
      });
    } catch (error) {
      if (!this.degraded) this.onDegraded(error as Error);
      this.degraded = true;
      throw error;
    }
    if (this.degraded) this.onDegraded(null);
    this.degraded = false;
    const [granted, used] = reply as [number, number];
    lease.tokens += granted;
    lease.used = used;
    if (lease.tokens < wanted) lease.exhausted = true;
  }
}
