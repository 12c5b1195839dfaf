/** What the soak counts (outcomes by reason, statuses, kinds, examples) and the key set a client holds. */
import type { Example, Kind, Outcome } from './exchange.ts';

/** Adds `n` to the count of `k`. */
export const inc = (m: Map<string, number>, k: string, n = 1) => m.set(k, (m.get(k) ?? 0) + n);

export class Stats {
  total = 0;
  readonly byStatus = new Map<string, number>();
  readonly byKind = new Map<Kind, Map<string, number>>();
  /** Outcomes by route (plain lookup, bundle, private lookup, mirror). */
  readonly byRoute = new Map<string, Map<string, number>>();
  /** Every refusal by its code: the gateway's (4xx, 5xx) and the mirror's. */
  readonly refusals = new Map<string, number>();
  /** Coded refusals that fit the fault in force, by why. */
  readonly expectedRefusals = new Map<string, number>();
  readonly wrong = new Map<string, number>();
  readonly unexpected5xx = new Map<string, number>();
  readonly expected503 = new Map<string, number>();
  readonly transport = new Map<string, number>();
  /** 200s with a valid record answered just after the records folder went away (from the gateway's memory, before its next poll). */
  validWhileAway = 0;
  /** 200s saying "never audited" (any route) in the same window: the live build's signed map decides them, without a read. */
  neverAuditedWhileAway = 0;
  /** Requests sent again once after a kept-alive connection closed under them, by the first error. */
  readonly retried = new Map<string, number>();
  /** Longest a request sent after a build swap was still answered from the previous build. */
  maxOldBuildLagMs = 0;
  /** 200s whose record was signed by a key the client only learned by refetching the key set. */
  verifiedAfterRefetch = 0;
  keySetFetches = 0;
  unknownKeyRefetches = 0;
  /** Ed25519 verifications actually run (identical bytes against the same key set are verified once). */
  verifications = 0;
  readonly examples: Example[] = [];

  count(outcome: Outcome, reason: string): void {
    if (outcome === 'wrong') inc(this.wrong, reason);
    else if (outcome === 'unexpected-5xx') inc(this.unexpected5xx, reason);
    else if (outcome === 'expected-503') inc(this.expected503, reason);
    else if (outcome === 'expected-refusal') inc(this.expectedRefusals, reason);
    else if (outcome === 'transport-error') inc(this.transport, reason);
  }

  sum(m: Map<string, number>): number {
    let n = 0;
    for (const v of m.values()) n += v;
    return n;
  }
}

/**
 * The key set as a client sees it: fetched from the gateway, refetched when a record names a
 * key it does not hold (UNKNOWN_KEY), one fetch at a time.
 */
export class KeySetCache {
  keySet: unknown = null;
  version = 0;
  private inflight: Promise<void> | null = null;

  constructor(
    private readonly fetchKeySet: () => Promise<unknown>,
    private readonly stats: Stats,
  ) {}

  /** Fetches unless a fetch newer than `seenVersion` already happened. */
  async refresh(seenVersion: number): Promise<void> {
    if (this.version > seenVersion) return;
    if (!this.inflight) {
      this.inflight = (async () => {
        this.stats.keySetFetches++;
        this.keySet = await this.fetchKeySet();
        this.version++;
      })().finally(() => (this.inflight = null));
    }
    await this.inflight;
  }
}
