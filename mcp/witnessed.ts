import { type TlogPolicy, verifyWitnessedCheckpoint } from '@merchant-verify/verifier';
import { parseVerifierKey } from '#shared';
import { sha256 } from '../core/crypto/hash.ts';
import { ERROR_REGISTRY } from '../core/errors/errors.ts';
import { witnessedJson } from '../core/rules/witnessed.ts';

/** What the verify tools' descriptions add when the gateway has a witness policy. */
export const WITNESSED_NOTE =
  'The last text item, {"witnessed": {"witnessed_at", "cosigners"}}, says when independent witnesses last cosigned the log checkpoint the answer is proven against (so it is what everyone is shown, and current as of then); {"witnessed": null, "code", "message"} when the quorum of the gateway\'s witness policy is not met.';

/**
 * What the tools say of witnesses when the gateway has a witness policy: the log's live
 * checkpoint (the one the answers' build published, which their proofs are against) under it.
 */
export interface WitnessSource {
  policy: TlogPolicy;
  /** The log's live checkpoint, a signed note with its cosignature lines; null when there is no log. */
  checkpoint: () => Promise<string | null>;
  /** The log's verifier key (for a policy that lists no log); null when there is none. */
  vkey: () => Promise<string | null>;
  now: () => number;
}

/**
 * The text item the verify tools add with a policy: `{"witnessed": {witnessed_at, cosigners}}`, or
 * `{"witnessed": null, "code", "message"}` when the live checkpoint does not hold under it.
 * Without a policy, no item: the answers are as they were.
 */
export async function witnessedItems(source: WitnessSource | undefined): Promise<{ type: 'text'; text: string }[]> {
  if (!source) return [];
  const item = (value: Record<string, unknown>) => [{ type: 'text' as const, text: JSON.stringify(value) }];
  const note = await source.checkpoint();
  if (note === null)
    return item({ witnessed: null, code: 'NOT_IN_LOG', message: `${ERROR_REGISTRY.NOT_IN_LOG.title}: this deployment keeps no log` });
  const vkey = await source.vkey();
  const logs = vkey === null ? [] : [parseVerifierKey(sha256, vkey.trim())];
  const result = verifyWitnessedCheckpoint(note, source.policy, { now: source.now(), logs });
  return result.valid
    ? item({ witnessed: witnessedJson(result) })
    : item({ witnessed: null, code: result.code, message: `${ERROR_REGISTRY[result.code].title}: ${result.message}` });
}
