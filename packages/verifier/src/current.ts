/**
 * Newest means last: an answer is of the newest build when its build statement is the last entry
 * of the checkpoint its log proof is against. Every build appends its statement after its records,
 * and a build that logged its entries without going live appends the live build's statement again,
 * so the checkpoint a gateway serves with its live build always ends with that build's statement.
 * A checkpoint holding entries after the statement shows, by itself, that a later build was logged:
 * a store pointed back at an older build (its proofs made against the newer checkpoint, which still
 * holds the older statement) is refused here, with or without a witness policy.
 */
import type { Checkpoint } from './tlog/checkpoint.ts';

/** The refusal of an answer whose checkpoint shows entries logged after its build's statement. */
export interface Superseded {
  valid: false;
  code: 'BUILD_SUPERSEDED';
  message: string;
}

/**
 * Whether build `build`'s statement, at entry `index`, is the last entry of `checkpoint`: null when
 * it is (the answer is of the newest build as of that checkpoint), BUILD_SUPERSEDED otherwise,
 * saying how many entries the checkpoint holds after it. An answer about a named kept build
 * (`asOfBuild`, the build the caller asked for with `build=`) is about the past by design and
 * skips the rule, for that build only: naming one build never lets another's answer pass as current.
 */
export function supersededIn(index: number, checkpoint: Checkpoint, build: string, asOfBuild?: string): Superseded | null {
  const after = checkpoint.size - 1 - index;
  if (after === 0 || asOfBuild === build) return null;
  return {
    valid: false,
    code: 'BUILD_SUPERSEDED',
    message: `build ${build}'s statement is entry ${index} of a checkpoint of ${checkpoint.size} entries, which holds ${after} ${after === 1 ? 'entry' : 'entries'} logged after it: a later build was logged, so this answer is not the newest build's`,
  };
}
