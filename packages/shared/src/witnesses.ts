/**
 * Witnessed checkpoints, bound to the portable primitives (@noble/hashes SHA-256, the package's
 * strict Ed25519): parse a C2SP tlog-policy, and check a checkpoint's log signature and its
 * quorum of cosignatures.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { nobleEd25519Verify } from './ed25519.ts';
import { InvalidArgumentError } from './errors.ts';
import { clockOf, maxAgeOf, optionsOf, policyOf, stringOf } from './options.ts';
import { parsePolicy as parsePolicyWith, type TlogPolicy } from './tlog/policy.ts';
import { createWitnessedVerifier, type WitnessedOptions, type WitnessedResult } from './tlog/witnessed.ts';
import { createEd25519Check } from './verify.ts';

const checkEd25519 = createEd25519Check(nobleEd25519Verify);

/**
 * Parses a tlog-policy file's text (c2sp.org/tlog-policy); a PolicyError (`INVALID_POLICY`)
 * names `source` and the line when it cannot be used.
 *
 * @example
 *   const policy = parsePolicy(await readFile('witnesses.policy', 'utf8'), 'witnesses.policy');
 */
export function parsePolicy(text: string, source?: string): TlogPolicy {
  return parsePolicyWith(sha256, text, source === undefined ? undefined : stringOf(source, 'source'));
}

/** The cosigned-checkpoint check on options already read (the proofs' witness step). */
export const verifyCheckedCheckpoint: (note: string, policy: TlogPolicy, options: WitnessedOptions) => WitnessedResult =
  createWitnessedVerifier((signature, message, publicKey) => checkEd25519(signature, message, publicKey, 'cosignature') === null);

/**
 * Checks a checkpoint (a signed note, with its cosignature lines) against a policy: signed by a
 * log of the policy (or `options.logs`) named by its origin, and cosigned by a quorum of the
 * policy's witnesses, each cosignature no more than a minute ahead of `options.now` and, with
 * `options.maxAgeMs`, no older than that. `witnessedAt` says when it was last witnessed. Options
 * that are not what they say (a maximum age that is not a finite, positive number of ms, a clock
 * that is not a time) throw InvalidArgumentError.
 *
 * @example
 *   const result = verifyWitnessedCheckpoint(checkpointNote, policy, { now: Date.now(), maxAgeMs: 36 * 3600_000 });
 *   if (result.valid) console.log('last witnessed', new Date(result.witnessedAt ?? 0));
 */
export function verifyWitnessedCheckpoint(
  note: string,
  policy: TlogPolicy,
  options: Omit<WitnessedOptions, 'now'> & { now?: number | Date },
): WitnessedResult {
  const o = optionsOf<WitnessedOptions>(options);
  const checked = policyOf(policy, 'policy');
  if (checked === undefined) throw new InvalidArgumentError('policy', 'is missing: a checkpoint is witnessed under a policy (parsePolicy)');
  if (o.logs !== undefined && !Array.isArray(o.logs)) throw new InvalidArgumentError('options.logs', 'must be an array of verifier keys');
  const maxAgeMs = maxAgeOf(o.maxAgeMs);
  return verifyCheckedCheckpoint(stringOf(note, 'note'), checked, {
    now: clockOf(o.now),
    ...(maxAgeMs === undefined ? {} : { maxAgeMs }),
    ...(o.logs === undefined ? {} : { logs: o.logs }),
  });
}

export type { PolicyLog, PolicyWitness, QuorumRule, TlogPolicy } from './tlog/policy.ts';
export type { Cosigner, Witnessed, WitnessedFailureCode, WitnessedOptions, WitnessedResult } from './tlog/witnessed.ts';
