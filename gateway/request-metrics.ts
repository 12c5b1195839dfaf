import type { Registry } from 'prom-client';

/** Request durations, seconds: a hot record takes well under a millisecond, a store read over the network more. */
export const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

type Labels = Partial<Record<'route' | 'method' | 'status' | 'code' | 'le', string | number>>;
/** One sample of a metric, as prom-client's registry takes it from a metric's get(). */
type Sample = { labels: Labels; value: number; metricName: string };

/**
 * The requests of one route and method: answers counted by status (successes) and by code and
 * status (problem documents), and the duration histogram's bucket counts in a typed array
 * (the last slot past the highest bucket). Counting one request is a few lookups and increments.
 */
class RouteSeries {
  readonly buckets = new Float64Array(DURATION_BUCKETS.length + 1);
  sum = 0;
  count = 0;
  readonly byStatus = new Map<number, number>();
  readonly byCode = new Map<string, Map<number, number>>();

  constructor(
    readonly route: string,
    readonly method: string,
  ) {}

  add(status: number, code: string | undefined, seconds: number): void {
    let statuses = this.byStatus;
    if (code) {
      let forCode = this.byCode.get(code);
      if (!forCode) this.byCode.set(code, (forCode = new Map()));
      statuses = forCode;
    }
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
    let b = 0;
    while (b < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[b]!) b++;
    this.buckets[b]!++;
    this.sum += seconds;
    this.count++;
  }
}

/**
 * `mvr_requests_total` and `mvr_request_duration_seconds`, counted as plain numbers as requests
 * are answered and handed to prom-client's registry as its metric data at each scrape:
 * prom-client's own `inc` and `observe` check and hash their labels on every call (about 2 us a
 * request between them).
 */
export class RequestMetrics {
  private readonly series = new Map<string, Map<string, RouteSeries>>();

  constructor(registry: Registry) {
    // prom-client formats (and, in a cluster, sums) whatever a registered metric's get() returns.
    registry.registerMetric(this.metric('mvr_requests_total', 'counter', REQUESTS_HELP, () => this.answered()) as never);
    registry.registerMetric(this.metric('mvr_request_duration_seconds', 'histogram', DURATION_HELP, () => this.durations()) as never);
  }

  /** One answered request. */
  add(route: string, method: string, status: number, code: string | undefined, seconds: number): void {
    let byMethod = this.series.get(route);
    if (!byMethod) this.series.set(route, (byMethod = new Map()));
    let s = byMethod.get(method);
    if (!s) byMethod.set(method, (s = new RouteSeries(route, method)));
    s.add(status, code, seconds);
  }

  private *all(): Iterable<RouteSeries> {
    for (const byMethod of this.series.values()) yield* byMethod.values();
  }

  private answered(): Sample[] {
    const values: Sample[] = [];
    const value = (labels: Labels, n: number) => values.push({ labels, value: n, metricName: 'mvr_requests_total' });
    for (const { route, method, byStatus, byCode } of this.all()) {
      for (const [status, n] of byStatus) value({ route, method, status }, n);
      for (const [code, statuses] of byCode) for (const [status, n] of statuses) value({ route, method, status, code }, n);
    }
    return values;
  }

  private durations(): Sample[] {
    const values: Sample[] = [];
    const name = 'mvr_request_duration_seconds';
    for (const { route, method, buckets, sum, count } of this.all()) {
      let below = 0;
      DURATION_BUCKETS.forEach((le, i) => {
        below += buckets[i]!;
        values.push({ labels: { route, method, le }, value: below, metricName: `${name}_bucket` });
      });
      values.push({ labels: { route, method, le: '+Inf' }, value: count, metricName: `${name}_bucket` });
      values.push({ labels: { route, method }, value: sum, metricName: `${name}_sum` });
      values.push({ labels: { route, method }, value: count, metricName: `${name}_count` });
    }
    return values;
  }

  private metric(name: string, type: 'counter' | 'histogram', help: string, values: () => Sample[]) {
    return {
      name,
      help,
      type,
      aggregator: 'sum' as const,
      get: async () => ({ name, help, type, aggregator: 'sum' as const, values: values() }),
    };
  }
}

const REQUESTS_HELP = 'HTTP requests answered, by route (the pattern, or "unmatched"), method, status and error code (absent on success).';
const DURATION_HELP = 'Time from the request head to the last byte of the answer handed to the kernel, by route and method.';
