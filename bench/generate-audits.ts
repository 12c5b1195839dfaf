import { once } from 'node:events';
import { createWriteStream } from 'node:fs';

/**
 * Writes N synthetic audits as JSONL, deterministic from a seed: the same N and seed always give
 * the same bytes. Domains are `m<i>-<hash>.example` (reserved TLD), with a realistic mix of
 * tiers, thin evidence and flagged merchants.
 *
 * Usage: tsx bench/generate-audits.ts --count 100000 --seed 42 --out audits.jsonl
 */
export async function generateAudits(count: number, seed: number, out: NodeJS.WritableStream): Promise<void> {
  let state = seed >>> 0 || 1;
  // xorshift32: tiny, fast, deterministic; statistical quality is irrelevant here.
  const rand = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 4294967296;
  };
  const engines = ['chatgpt', 'claude', 'gemini', 'perplexity', 'copilot'];
  const archetypes = ['marketplace', 'd2c_brand', 'retailer', 'subscription', 'services'];
  const round2 = (x: number) => Math.round(x * 100) / 100;
  for (let i = 0; i < count; i++) {
    const ok = rand() > 0.1;
    const flagged = rand() < 0.02;
    const score = !ok && rand() < 0.5 ? null : round2(rand() * 100);
    const ran = engines.filter(() => rand() > 0.2);
    const day = 1 + Math.floor(rand() * 28);
    const audit = {
      domain: `m${i}-${Math.floor(rand() * 1e9).toString(36)}.example`,
      score,
      sub_scores: {
        visibility: round2(rand() * 100),
        recommendation_rate: round2(rand() * 100),
        technical_readiness: round2(rand() * 100),
      },
      flags: rand() < 0.3 ? ['missing_signal:reviews'] : [],
      evidence: {
        ok,
        coverage: round2(rand()),
        site_coverage: round2(rand()),
        engines_ran: ran.length ? ran : ['chatgpt'],
        engines_skipped: engines.filter((e) => !ran.includes(e)),
        blockers: ok ? [] : ['robots_txt'],
      },
      archetype: archetypes[Math.floor(rand() * archetypes.length)],
      first_seen: `2025-0${1 + Math.floor(rand() * 9)}-${String(day).padStart(2, '0')}T08:00:00Z`,
      last_audited_at: `2026-10-${String(day).padStart(2, '0')}T12:00:00Z`,
      ...(flagged ? { flagged: true } : {}),
    };
    if (!out.write(`${JSON.stringify(audit)}\n`)) await once(out, 'drain');
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name: string, fallback: string) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? process.argv[i + 1]! : fallback;
  };
  const outPath = arg('out', '-');
  const out = outPath === '-' ? process.stdout : createWriteStream(outPath);
  await generateAudits(Number(arg('count', '1000')), Number(arg('seed', '42')), out);
  if (out !== process.stdout) {
    out.end();
    await once(out, 'finish');
  }
}
