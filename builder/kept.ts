import { readFile } from 'node:fs/promises';
import { type KeySet, parseKeySet } from '@merchant-verify/verifier';
import type { KeptBuild } from '../storage/kept-builds.ts';

/**
 * Keeps every key that signed a kept build listed: a kept build's records must go on
 * verifying, so a key leaves the key set only once no kept build has records signed by it.
 * Public keys come from the key set published before (a retired key is no longer in the keys
 * folder); a kept build whose key is nowhere to be found is a warning.
 */
export async function withKeptKeys<K extends KeySet>(
  keySet: K,
  kept: KeptBuild[],
  previousKeySetFile: string,
  warn: (message: string) => void,
): Promise<K> {
  const needed = [...new Set(kept.map((b) => b.key_id).filter((k): k is string => k !== null))].filter(
    (kid) => !keySet.keys.some((k) => k.kid === kid),
  );
  if (needed.length === 0) return keySet;
  const previous = await readFile(previousKeySetFile, 'utf8')
    .then((text) => parseKeySet(JSON.parse(text)))
    .catch(() => ({ keys: [] }) as KeySet);
  const keys = [...keySet.keys];
  for (const kid of needed) {
    const key = previous.keys.find((k) => k.kid === kid);
    if (key) keys.push(key);
    else
      warn(
        `key ${kid} signed a kept build but is in neither the keys folder nor the published key set; that build's records will not verify`,
      );
  }
  return { ...keySet, keys };
}
