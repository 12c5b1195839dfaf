import type { OnlineTrust } from '@merchant-verify/verifier';

// What a verification trusted, and from where, as the edges (CLI, MCP) say it: a key set or log key
// taken from the very source being checked is trust on first use, which a source that lies can
// exploit (it hands over the key its lie verifies with), so it is said aloud with how to pin it.

/** Where the trust of a verification came from, as JSON answers say it (snake_case). */
export interface TrustJson {
  /** `pinned`: the caller's (--keys FILE, or checked against --trusted-keys); `first_use`: taken from where it was fetched. */
  key_set: 'pinned' | 'first_use';
  /** The file or URL the key set was read from. */
  key_set_source: string;
  /** `pinned`: --log-key; `policy`: the witness policy's log line; `first_use`: fetched from the gateway; null: no log check ran. */
  log_key: 'pinned' | 'policy' | 'first_use' | null;
  /** The file or URL the log key was read from; null when none was read. */
  log_key_source: string | null;
}

/** Where the edge read each thing from, and whether the key set's keys were checked against pinned ones. */
export interface TrustSources {
  keySet: string;
  /** The key set was restricted to the keys a pinned set trusts (--trusted-keys). */
  pinnedKeys: boolean;
  /** Where the log key is read from when given (--log-key), from the policy, or from the gateway. */
  logKey: { given?: string; policy?: string; fetched?: string };
  /**
   * The source is the verifier's own deployment (MCP over its own records): its key set and log key
   * are the ones its operator configured and pinned, not taken on first use.
   */
  own?: boolean;
}

const LOG_KEY_TRUST = { given: 'pinned', policy: 'policy', source: 'first_use' } as const;

/**
 * The trust member of a verification's JSON, from the online client's account of what it took
 * from where (`OnlineTrust`) and the edge's sources.
 */
export function trustJson(trust: OnlineTrust, sources: TrustSources): TrustJson {
  const logKey = trust.logKey === null ? null : sources.own && trust.logKey === 'source' ? 'pinned' : LOG_KEY_TRUST[trust.logKey];
  const logSource = { given: sources.logKey.given, policy: sources.logKey.policy, source: sources.logKey.fetched };
  return {
    key_set: sources.own || sources.pinnedKeys || trust.keySet === 'given' ? 'pinned' : 'first_use',
    key_set_source: sources.keySet,
    log_key: logKey,
    log_key_source: trust.logKey === null ? null : (logSource[trust.logKey] ?? null),
  };
}

/** One plain line for each thing taken on first use (none when everything was pinned). */
export function trustLines(trust: TrustJson | null): string[] {
  if (!trust) return [];
  return [
    ...(trust.key_set === 'first_use'
      ? [`  key set    taken from ${trust.key_set_source} (first use; pin it with --trusted-keys FILE)`]
      : []),
    ...(trust.log_key === 'first_use'
      ? [`  log key    taken from ${trust.log_key_source} (first use; pin it with --log-key FILE, or a log line in --policy)`]
      : []),
  ];
}
