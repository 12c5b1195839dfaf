import { type TlogPolicy, verifyWitnessedCheckpoint, type Witnessed, type WitnessedResult } from '@merchant-verify/verifier';
import type { NoteVerifierKey } from '@merchant-verify/verifier/tlog';

// A published checkpoint under a witness policy, and how the edges (CLI, MCP) show when it was last witnessed.

/**
 * The log's checkpoint (a signed note with its cosignature lines) under a policy, at `now`. A
 * policy's log lines, when it has any, are the logs it applies to; one without applies to this log (`vkey`).
 */
export function checkpointUnderPolicy(
  note: string,
  policy: TlogPolicy,
  vkey: NoteVerifierKey | null,
  clock: { now: number; maxAgeMs?: number },
): WitnessedResult {
  return verifyWitnessedCheckpoint(note, policy, { ...clock, logs: policy.logs.length === 0 && vkey ? [vkey] : [] });
}

const iso = (ms: number) => new Date(ms).toISOString();

/** When a checkpoint was last witnessed, as JSON answers say it (`--json`, MCP). */
export function witnessedJson(w: Witnessed): { witnessed_at: string | null; cosigners: { witness: string; time: string }[] } {
  return {
    witnessed_at: w.witnessedAt === null ? null : iso(w.witnessedAt),
    cosigners: w.cosigners.map((c) => ({ witness: c.witness, time: iso(c.time) })),
  };
}

/** When a checkpoint was last witnessed, in words. */
export function witnessedText(w: Witnessed): string {
  if (w.witnessedAt === null) return "not asked for (the policy's quorum is none)";
  return `last at ${iso(w.witnessedAt)}, cosigned by ${w.cosigners.map((c) => `${c.witness} (${iso(c.time)})`).join(', ')}`;
}
