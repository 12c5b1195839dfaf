import { openStore, type ReadRefusal, type StoreSettings } from '../storage/open.ts';
import { CompactLookups } from './compact-lookups.ts';
import { BuildHistory } from './history.ts';
import { LogProofs } from './log-proofs.ts';
import { MirrorFiles } from './mirror-files.ts';
import { RecordsService, type RecordsServiceOptions } from './records.ts';
import { trustForStore } from './store-trust.ts';

export interface RecordsStackOptions extends RecordsServiceOptions {
  /** Where the records are and how to reach them, as the CLI resolved them. */
  store: StoreSettings;
  /** How often the live build and its key set are re-checked (ms); unset: read once, for a command that answers and exits. */
  refreshMs?: number;
  /** Told about every read from the store refused at its size limit or deadline (for the log and metrics). */
  onReadRefused?: (refusal: ReadRefusal) => void;
  /** Told at each tick of the refresh timer that found the last refresh still running (it is skipped, never stacked). */
  onRefreshSkipped?: () => void;
  /** Told each time a kept build's whole domain map is read and checked (once per build; see `BuildHistory`). */
  onKeptMapLoad?: (build: string) => void;
  /** Bytes of compact answers kept (default CACHE_LIMITS.compactAnswerBytes; tests lower it to see eviction). */
  compactAnswerBytes?: number;
}

/** The records opened: the service, the kept builds and the log's proofs over one store and its key set. */
export interface RecordsStack {
  records: RecordsService;
  /** The kept builds (a store that keeps none answers BUILD_NOT_FOUND, saying why). */
  history: BuildHistory;
  /** Inclusion proofs of the transparency log, and its public files (a store that keeps no log answers NOT_IN_LOG). */
  proofs: LogProofs;
  /** Compact private lookups: a bucket's answer as its build wrote it, and the statement it is checked against. */
  compact: CompactLookups;
  /** Whole builds, file by file, for mirrors. */
  mirror: MirrorFiles;
  /** Stops the refresh loop and releases the store's connections. */
  close(): Promise<void>;
}

/**
 * The one way the records are opened, by the gateway, `mvr mcp` and `mvr changes` alike: the store
 * the settings name, the records service over it (which holds the key set published with the live
 * build), the live build read once, and then re-checked every `refreshMs` until `close`.
 */
export async function openRecordsStack(options: RecordsStackOptions): Promise<RecordsStack> {
  const { store, refreshMs, onRefreshSkipped, onReadRefused, onKeptMapLoad, compactAnswerBytes, ...serviceOptions } = options;
  const trust = trustForStore(store, options.trust);
  const records = new RecordsService(openStore(store, { onReadRefused }), { ...serviceOptions, trust });
  try {
    await records.refresh();
  } catch (error) {
    await records.close();
    throw error;
  }
  const history = new BuildHistory(records, { onMapLoad: onKeptMapLoad });
  const proofs = new LogProofs(records, history);
  // A failed refresh keeps what was read before; the store says what it could not read. A tick
  // that finds the last refresh still running (a slow store) is skipped: one refresh at a time.
  let running = false;
  const tick = () => {
    if (running) return onRefreshSkipped?.();
    running = true;
    void records
      .refresh()
      .then(() => proofs.refreshLive())
      .catch(() => undefined)
      .finally(() => {
        running = false;
      });
  };
  const timer = refreshMs ? setInterval(tick, refreshMs) : null;
  timer?.unref();
  return {
    records,
    history,
    proofs,
    compact: new CompactLookups(records, proofs, compactAnswerBytes),
    mirror: new MirrorFiles(records, history),
    async close() {
      if (timer) clearInterval(timer);
      await records.close();
    },
  };
}
