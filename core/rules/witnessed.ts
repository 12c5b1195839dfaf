import type { Witnessed } from '@merchant-verify/verifier';

// How the edges (CLI, MCP) say when a checkpoint was last witnessed.

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
