/** Audit input for tests: a valid audit with members replaced, JSONL text, and the sample audits read on their own. */
import { readFile } from 'node:fs/promises';
import { lines } from './cli.ts';
import { listFiles } from './outputs.ts';
import { SAMPLE_AUDITS } from './project.ts';

/** A valid audit for `domain`; `patch` members replace the defaults (undefined removes one). */
export function audit(domain: string, patch: Record<string, unknown> = {}): Record<string, unknown> {
  const base: Record<string, unknown> = {
    domain,
    score: 70,
    sub_scores: { visibility: 70, recommendation_rate: 71, technical_readiness: 72 },
    flags: [],
    evidence: { ok: true, coverage: 0.9, site_coverage: 0.8, engines_ran: ['chatgpt', 'claude'], engines_skipped: [], blockers: [] },
    archetype: 'retailer',
    first_seen: '2025-01-01T00:00:00Z',
    last_audited_at: '2026-10-01T00:00:00Z',
  };
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) delete base[k];
    else base[k] = v;
  }
  return base;
}

/** JSONL text: objects are JSON-encoded, strings are written as the raw line. */
export function jsonl(...items: (Record<string, unknown> | string)[]): string {
  return `${items.map((i) => (typeof i === 'string' ? i : JSON.stringify(i))).join('\n')}\n`;
}

/** The sample audits, read independently of the build: source and raw `domain` of each. */
export async function sampleAudits(): Promise<{ source: string; domain: string; value: Record<string, unknown> }[]> {
  const out: { source: string; domain: string; value: Record<string, unknown> }[] = [];
  for (const [rel, abs] of await listFiles(SAMPLE_AUDITS)) {
    const text = await readFile(abs, 'utf8');
    const values: unknown[] = rel.endsWith('.jsonl')
      ? lines(text)
          .filter((l) => l.trim() !== '')
          .map((l) => JSON.parse(l) as unknown)
      : rel.endsWith('.json')
        ? ([] as unknown[]).concat(JSON.parse(text) as unknown)
        : [];
    for (const v of values) {
      const value = v as Record<string, unknown>;
      out.push({ source: rel, domain: String(value.domain), value });
    }
  }
  return out;
}
