/**
 * Private lookups over a build of synthetic audits (the benchmark's generator, signed once): 1,000
 * domains in every run of the suite; MVR_PRIVATE_LOOKUP_COUNT=10000 runs it at ten times that
 * (about 2.5 minutes of one core, too dear for every run). The real gateway, and for every domain
 * of the build and for domains it never audited, the package's verdict from the answer for the domain's prefix is the verdict of
 * the plain lookup, asked of a second gateway so that the first never hears a domain. The first
 * gateway's access log and metrics hold no domain; every answer of the build is one size.
 *
 * CPU: every domain goes through `verifyPrefixAnswer` (two Ed25519 checks and a range proof of about
 * 1,250 hashes each). The plain side is fetched in batches: an audited domain's plain record must
 * be the very record the prefix answer verified (so its verdict is the same), and the package
 * verifies the plain answer of every never-audited domain (with its absence proof) and of one
 * audited domain in 50. About 2.5 minutes of one core, most of it the Ed25519 checks of the portable
 * verifier (two a domain), at 10,000 domains.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { isNeverAudited, verifyAnswer, verifyPrefixAnswer } from '@merchant-verify/verifier';
import { afterAll, describe, expect, it } from 'vitest';
import { generateAudits } from '../../bench/generate-audits.ts';
import { cleanup, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { publishedKeySet, readCurrentRecords } from '../support/outputs.ts';
import { build, makeProject } from '../support/project.ts';

afterAll(cleanup);

/** How many audited domains the build has; prefixes stay one hex digit long up to 65,535. */
const COUNT = Number(process.env.MVR_PRIVATE_LOOKUP_COUNT ?? 1_000);
const NEVER = Array.from({ length: 100 }, (_, i) => `never-audited-${i}.example`);
const hexOf = (domain: string) => createHash('sha256').update(domain).digest('hex');

/** The plain answers of `domains` (`POST /v1/verify/batch`, 100 at a time), by domain. */
async function plainAnswers(g: TestGateway, domains: string[]): Promise<Map<string, Record<string, unknown>>> {
  const out = new Map<string, Record<string, unknown>>();
  for (let i = 0; i < domains.length; i += 100) {
    const r = await g.request('/v1/verify/batch', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ domains: domains.slice(i, i + 100) }),
    });
    expect(r.status).toBe(200);
    for (const item of r.json.results as { domain: string; record: Record<string, unknown> }[]) out.set(item.domain, item.record);
  }
  return out;
}

describe(`private lookups over a build of ${COUNT} domains`, async () => {
  const project = await makeProject({ samples: false, build: false });
  const out = createWriteStream(join(project.auditsDir, 'synthetic.jsonl'));
  await generateAudits(COUNT, 72, out);
  out.end();
  await once(out, 'finish');
  await build(project);
  const audited = [...(await readCurrentRecords(project.recordsDir)).keys()];
  const { keySet } = await publishedKeySet(project);
  const privateGateway = await startTestGateway(project, {
    rateLimitPerMinute: 100_000,
    metrics: { listen: { host: '127.0.0.1', port: 0 } },
  });
  const plainGateway = await startTestGateway(project, { rateLimitPerMinute: 100_000 });

  it("gives every domain the plain lookup's verdict, from answers of one size, and never hears a domain", {
    timeout: 600_000,
  }, async () => {
    expect(audited.length).toBe(COUNT);
    // Every prefix of the build asked once: a caller asks its own, and a CDN keeps them all.
    const length = (await privateGateway.request('/v1/lookup/0')).json.statement.lookup.prefix_length as number;
    expect(length).toBe(1);
    const answers = new Map<string, unknown>();
    const sizes = new Set<number>();
    for (let p = 0; p < 16 ** length; p++) {
      const prefix = p.toString(16).padStart(length, '0');
      const r = await privateGateway.request(`/v1/lookup/${prefix}`);
      expect(r.status).toBe(200);
      sizes.add(r.bytes.length);
      answers.set(prefix, r.json);
    }
    expect(sizes.size).toBe(1);
    const counts = [...answers.values()].map((a) => (a as { records: unknown[] }).records.length);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(COUNT);
    // The prefix length's aim, at least 256 audited domains a prefix, where the build is large enough
    // for it: below 16 x 256 domains one hex digit, the shortest prefix, covers fewer.
    expect(Math.min(...counts)).toBeGreaterThanOrEqual(COUNT >= 16 * 256 ? 256 : 1);

    const plain = await plainAnswers(plainGateway, [...audited, ...NEVER]);
    // Fetched before the verifications, which keep the event loop busy for a while.
    const absences = new Map<string, unknown>();
    for (const domain of NEVER) absences.set(domain, (await plainGateway.request(`/v1/absence?domain=${domain}`)).json);
    const differing: string[] = [];
    for (const [i, domain] of [...audited, ...NEVER].entries()) {
      const privately = verifyPrefixAnswer({ domain, answer: answers.get(hexOf(domain).slice(0, length)), keySet });
      const answer = plain.get(domain)!;
      if (isNeverAudited(answer) || i % 50 === 0) {
        const absence = isNeverAudited(answer) ? { proof: absences.get(domain) } : undefined;
        const openly = verifyAnswer({ answer, keySet, domain, ...(absence ? { absence } : {}) });
        if (privately.code !== openly.code) differing.push(`${domain}: ${privately.code} privately, ${openly.code} plainly`);
      } else if (privately.code !== null || JSON.stringify(privately.answer) !== JSON.stringify(answer)) {
        differing.push(`${domain}: ${privately.code} privately, not the plain record`);
      }
    }
    expect(differing).toEqual([]);

    const requests = privateGateway.logs.filter((l) => l.msg === 'request');
    expect(requests.length).toBe(16 ** length + 1);
    const logged = privateGateway.logs.map((l) => JSON.stringify(l)).join('\n');
    const scrape = await (await fetch(privateGateway.gateway.metricsUrl!)).text();
    expect([...audited, ...NEVER].filter((d) => logged.includes(d) || scrape.includes(d))).toEqual([]);
  });
});
