import { Counter, type Registry } from 'prom-client';

/** What reading the store costs and where its limits (core/limits.ts) stopped it: reads refused, refresh ticks skipped, whole kept maps read. */
export interface StoreMetrics {
  /** One read from the store refused at its size limit or its deadline. */
  readRefused(file: string, limit: 'size' | 'deadline'): void;
  /** One tick of the refresh timer skipped, the last refresh still running. */
  refreshSkipped(): void;
  /** One kept build's whole domain map read and checked. */
  keptMapLoaded(): void;
}

/** Registers the store's counters in `registry`. */
export function storeMetrics(registry: Registry): StoreMetrics {
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
  const keptMapLoads = new Counter({
    name: 'mvr_kept_map_loads_total',
    help: 'Whole domain maps of kept builds read and checked against their statements, to index them (history and past builds) or prove an absence in them; once per kept build while it is kept, not per request.',
    registers: [registry],
  });
  return {
    readRefused: (file, limit) => refused.inc({ file, limit }),
    refreshSkipped: () => skipped.inc(),
    keptMapLoaded: () => keptMapLoads.inc(),
  };
}
