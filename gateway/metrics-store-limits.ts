import { Counter, type Registry } from 'prom-client';

/** The metrics of the store's limits (core/limits.ts): reads refused at them, refresh ticks skipped. */
export interface StoreLimitMetrics {
  /** One read from the store refused at its size limit or its deadline. */
  readRefused(file: string, limit: 'size' | 'deadline'): void;
  /** One tick of the refresh timer skipped, the last refresh still running. */
  refreshSkipped(): void;
}

/** Registers the store limits' counters in `registry`. */
export function storeLimitMetrics(registry: Registry): StoreLimitMetrics {
  const refused = new Counter({
    name: 'mvr_store_reads_refused_total',
    help: 'Reads from an http(s) origin or a bucket refused at their limits, by kind of file and limit (size or deadline); what was served before stays served.',
    labelNames: ['file', 'limit'] as const,
    registers: [registry],
  });
  const skipped = new Counter({
    name: 'mvr_store_refreshes_skipped_total',
    help: 'Ticks of the refresh timer skipped because the last refresh of the store was still running (a slow store): refreshes never stack.',
    registers: [registry],
  });
  return {
    readRefused: (file, limit) => refused.inc({ file, limit }),
    refreshSkipped: () => skipped.inc(),
  };
}
