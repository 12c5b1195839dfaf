import { ConfigError } from '../core/errors/errors.ts';
import type { TrustSettings } from '../core/rules/key-trust.ts';
import { isHttp, isS3, type StoreSettings } from '../storage/url.ts';

/** No key trusted: on a bucket or an origin in unsigned mode, only builds that carry no signature pass. */
const NO_KEYS = { keys: [] };

/**
 * The trust the records at `store` are read with; INVALID_CONFIG, naming the flag and why, when the
 * operator gave none that a bucket or an origin needs. A bucket or an http(s) origin is changed by
 * whoever can write it, so a key set read there (or carried with its builds) cannot name the keys,
 * not even at the first read: a restart would trust what the store holds then. The operator names
 * them (`trustedKeys`), or serves unsigned builds only, trusting no key. A records folder is the
 * project's own: without `trustedKeys`, its public folder's key set as first read is pinned.
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
