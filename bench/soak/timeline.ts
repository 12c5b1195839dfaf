/**
 * What happened when, on one monotonic clock (performance.now()): the builds that went live and
 * the fault windows. The checker reads it to tell an expected 503 from a bug, and a record that
 * may still be the previous build's from a stale one.
 */
export interface BuildMark {
  index: number;
  label: string;
  /** The build's id (its statement's `build`), once runBuild returned; null while it runs or when it was refused. */
  buildId: string | null;
  /** `issued_at` every record of this build carries. */
  issuedAt: string;
  /** The key that signs this build. */
  keyId: string;
  /** Audit score per domain index, as this build was given them. */
  scores: readonly (number | null)[];
  startedAt: number;
  /** When the `current` link was seen pointing at this build (polled every 10 ms during the build). */
  swappedAt: number | null;
  /** When runBuild returned (the swap and the prune are done); null while it runs. */
  doneAt: number | null;
}

/** Fault 2: the records folder renamed away and back. */
export interface StoreOutage {
  start: number;
  awayDone: number | null;
  restoreStart: number | null;
  end: number | null;
}

/** Fault 3: record files damaged in the live build, then restored. */
export interface Corruption {
  domains: ReadonlySet<string>;
  start: number;
  corruptDone: number | null;
  restoreStart: number | null;
  end: number | null;
}

export class Timeline {
  readonly builds: BuildMark[] = [];
  readonly outages: StoreOutage[] = [];
  readonly corruptions: Corruption[] = [];
  /** Domains the load should also ask for right now (the damaged records during fault 3). */
  targets: string[] = [];

  /**
   * @param graceMs how long after a change the gateway may still answer as before: it polls
   *   the records folder and key set every 250 ms, so 1 s is four polls.
   */
  constructor(
    public t0: number,
    readonly graceMs: number,
  ) {}

  rel(t: number): number {
    return Math.round(t - this.t0);
  }

  buildByIssuedAt(issuedAt: unknown): BuildMark | undefined {
    return this.builds.find((b) => b.issuedAt === issuedAt);
  }

  /** When a build went live: the swap if it was seen, else when runBuild returned (later, so never stricter). */
  private liveAt(b: BuildMark): number | null {
    return b.swappedAt ?? b.doneAt;
  }

  /** The oldest build a request started at `start` may still be answered from: a newer one has been live for the grace period. */
  oldestAcceptableBuild(start: number): number {
    let index = 0;
    for (const b of this.builds) {
      const live = this.liveAt(b);
      if (live !== null && live + this.graceMs <= start) index = b.index;
    }
    return index;
  }

  /** A build went live while the request ran, or within the grace before it started. */
  nearSwap(start: number, end: number): boolean {
    return this.builds.some((b) => {
      const live = this.liveAt(b);
      return live !== null && live <= end && start <= live + this.graceMs;
    });
  }

  /** The request overlapped an outage (or its grace after the folder came back). */
  overlapsOutage(start: number, end: number): boolean {
    return this.outages.some((o) => end >= o.start && (o.end === null || start <= o.end + this.graceMs));
  }

  /**
   * The request ran entirely while the folder was away (`settleMs` after it went): nothing but
   * 503 STORE_UNAVAILABLE is right. A read of a listed record that misses notices at once; what
   * needs no read (a verified record in memory, "never audited" from the live build's signed map)
   * may be answered until the gateway's next look, hence `settleMs` for those.
   */
  insideOutage(start: number, end: number, settleMs = 0): boolean {
    return this.outages.some(
      (o) => o.awayDone !== null && start >= o.awayDone + settleMs && (o.restoreStart === null || end <= o.restoreStart),
    );
  }

  /** How long after the next build went live a request answered from this one was sent (0 if none is live yet). */
  lagBehind(buildIndex: number, start: number): number {
    // The next build that went live: one refused before its swap (the witness outage) never did.
    const newer = this.builds.slice(buildIndex + 1).find((b) => this.liveAt(b) !== null);
    const live = newer ? this.liveAt(newer) : null;
    return live !== null && start > live ? start - live : 0;
  }

  overlapsCorruption(domain: string, start: number, end: number): boolean {
    return this.corruptions.some((c) => c.domains.has(domain) && end >= c.start && (c.end === null || start <= c.end + this.graceMs));
  }

  /** The request for a damaged record ran entirely while it was damaged: it must not be a 200. */
  insideCorruption(domain: string, start: number, end: number): boolean {
    return this.corruptions.some(
      (c) =>
        c.domains.has(domain) && c.corruptDone !== null && start >= c.corruptDone && (c.restoreStart === null || end <= c.restoreStart),
    );
  }
}
