import { readFile } from 'node:fs/promises';
import { type KeySet, parseKeySet } from '@merchant-verify/verifier';
import { keySetEndorsements } from '#shared';
import { ConfigError } from '../core/errors/errors.ts';
import type { TrustSettings } from '../core/rules/key-trust.ts';
import { trustForStore } from '../service/store-trust.ts';
import { mirrorFolderOf } from '../storage/mirror-folder.ts';
import type { StoreSettings } from '../storage/url.ts';
import type { Config } from './config.ts';

/** The options of a command that reads records (serve, dev, mcp, changes): which keys it trusts. */
export const TRUST_OPTIONS = ['trustedKeys', 'unsigned'] as const;

/** `--unsigned`, the flag of MVR_UNSIGNED. */
export const unsignedArg = {
  unsigned: {
    type: 'boolean',
    description:
      'serve builds and records that carry no signature (env MVR_UNSIGNED=1); without it an unsigned build is refused, whatever its key set lists',
  },
} as const;

/**
 * The trust settings from `--trusted-keys` / MVR_TRUSTED_KEYS and `--unsigned` / MVR_UNSIGNED, the
 * pinned key set read now, for the records at `store`: checked before anything starts (a bucket or
 * an origin needs one of them), so `mvr serve --workers` stops in its primary, not in each process.
 */
export async function trustOf(
  config: Config<(typeof TRUST_OPTIONS)[number]>,
  args: { unsigned?: boolean },
  store: StoreSettings,
): Promise<TrustSettings> {
  const unsigned = args.unsigned === true || config.unsigned;
  // A mirror folder pins the keys it verified its builds with, unless the operator names others.
  const trustedKeys = config.trustedKeys ? await readTrustedKeys(config.trustedKeys) : mirrorFolderOf(store.url)?.trustedKeys;
  return trustForStore(store, trustedKeys ? { trustedKeys, unsigned } : { unsigned });
}

/** A pinned key set file: a JWK Set listing at least one Ed25519 key (ConfigError naming the file otherwise), with its endorsements. */
export async function readTrustedKeys(file: string): Promise<KeySet> {
  let keySet: KeySet;
  let endorsements: unknown[];
  try {
    const raw: unknown = JSON.parse(await readFile(file, 'utf8'));
    keySet = parseKeySet(raw);
    // Kept: the successions they name are fixed for good (a retired key endorses nothing else).
    endorsements = keySetEndorsements(raw);
  } catch (error) {
    throw new ConfigError(`--trusted-keys ${file}: ${(error as Error).message}`);
  }
  if (keySet.keys.length === 0) throw new ConfigError(`--trusted-keys ${file}: lists no Ed25519 key, so it would trust nothing`);
  return endorsements.length > 0 ? ({ keys: keySet.keys, endorsements } as KeySet) : keySet;
}
