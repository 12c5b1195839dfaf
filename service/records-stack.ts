import { ConfigError } from '../core/errors.ts';
import type { TrustSettings } from '../core/key-trust.ts';
import { openStore, type StoreSettings } from '../storage/open.ts';
import { isHttp, isS3 } from '../storage/url.ts';
import { BuildHistory } from './history.ts';
import { LogProofs } from './log-proofs.ts';
import { RecordsService, type RecordsServiceOptions } from './records.ts';

export interface RecordsStackOptions extends RecordsServiceOptions {
  /** Where the records are and how to reach them, as the CLI resolved them. */
  store: StoreSettings;
  /** How often the live build and its key set are re-checked (ms); unset: read once, for a command that answers and exits. */
  refreshMs?: number;
}

/** The records opened: the service, the kept builds and the log's proofs over one store and its key set. */
export interface RecordsStack {
  records: RecordsService;
  /** The kept builds (a store that keeps none answers BUILD_NOT_FOUND, saying why). */
  history: BuildHistory;
  /** Inclusion proofs of the transparency log, and its public files (a store that keeps no log answers NOT_IN_LOG). */
  proofs: LogProofs;
  /** Stops the refresh loop and releases the store's connections. */
  close(): Promise<void>;
}

/**
 * The one way the records are opened, by the gateway, `mvr mcp` and `mvr changes` alike: the store
 * the settings name, the records service over it (which holds the key set published with the live
 * build), the live build read once, and then re-checked every `refreshMs` until `close`.
 */
export async function openRecordsStack(options: RecordsStackOptions): Promise<RecordsStack> {
  const { store, refreshMs, ...serviceOptions } = options;
  const trust = trustForStore(store, options.trust);
  const records = new RecordsService(openStore(store), { ...serviceOptions, trust });
  try {
    await records.refresh();
  } catch (error) {
    await records.close();
    throw error;
  }
  // A failed refresh keeps what was read before; the store says what it could not read.
  const timer = refreshMs ? setInterval(() => void records.refresh().catch(() => undefined), refreshMs) : null;
  timer?.unref();
  const history = new BuildHistory(records);
  return {
    records,
    history,
    proofs: new LogProofs(records, history),
    async close() {
      if (timer) clearInterval(timer);
      await records.close();
    },
  };
}

/** No key trusted: on a bucket or an origin in unsigned mode, only builds that carry no signature pass. */
const NO_KEYS = { keys: [] };

/**
 * The trust the records at `store` are read with. A bucket or an http(s) origin is changed by whoever
 * can write it, so a key set read there (or carried with its builds) cannot name the keys, not even
 * at the first read: a restart would trust what the store holds then. The operator names them
 * (`trustedKeys`), or serves unsigned builds only, trusting no key. A records folder is the
 * project's own: without `trustedKeys`, its public folder's key set as first read is pinned
 * (INVALID_CONFIG otherwise, naming the flag and why).
 */
export function trustForStore(store: StoreSettings, trust: TrustSettings = {}): TrustSettings {
  if (!isS3(store.url) && !isHttp(store.url)) return trust;
  if (trust.trustedKeys) return trust;
  if (trust.unsigned) return { ...trust, trustedKeys: NO_KEYS };
  throw new ConfigError(
    `${store.flag ?? '--records'} ${store.url}: give the record keys to trust with --trusted-keys FILE (or MVR_TRUSTED_KEYS), ` +
      'a copy of the published key set (public/.well-known/merchant-verify-keys.json), or --unsigned (MVR_UNSIGNED=1) to serve ' +
      'only builds that carry no signature: the key set of a bucket or an origin is read from a store anyone with write access ' +
      'could change, so it cannot choose the keys it is checked with',
  );
}
