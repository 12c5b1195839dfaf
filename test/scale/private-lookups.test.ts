/**
 * Compact private lookups over a build of synthetic audits (the benchmark's generator, signed once):
 * 500 domains in every run of the suite; MVR_PRIVATE_LOOKUP_COUNT=10000 runs it at twenty times that
 * (too dear for every run). The real gateway, and for every domain of the build and for domains it
 * never audited, the package's verdict from the compact answer for the domain's bucket is the
 * verdict of the plain lookup, asked of a second gateway so that the first never hears a domain.
 * The first gateway's access log and metrics hold no domain; every answer of the build is one size.
 *
 * CPU: every domain goes through `verifyCompactAnswer` (the statement's Ed25519 check and a range
 * proof). The plain side is fetched in batches: an audited domain's plain record must be the very
 * record its proven entry commits to (so its verdict is the same), and the package verifies the
 * plain answer of every never-audited domain (with its absence proof) and of one audited domain in 50.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { bucketHex, bucketOf, isNeverAudited, recordMatchesEntry, verifyAnswer, verifyCompactAnswer } from '@merchant-verify/verifier';
import { afterAll, describe, expect, it } from 'vitest';
import { generateAudits } from '../../bench/generate-audits.ts';
import { cleanup, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { publishedKeySet, readCurrentRecords } from '../support/outputs.ts';
import { build, makeProject } from '../support/project.ts';

afterAll(cleanup);

/** How many audited domains the build has. */
const COUNT = Number(process.env.MVR_PRIVATE_LOOKUP_COUNT ?? 500);
const NEVER = Array.from({ length: 100 }, (_, i) => `never-audited-${i}.example`);
const hashOf = (domain: string) => new Uint8Array(createHash('sha256').update(domain).digest());

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
    // The statement first, as a client reads it, then every bucket of the build once: a caller asks its own, and a CDN keeps them all.
    const { statement } = (await privateGateway.request('/v1/lookup')).json;
    const bits = statement.lookup.bits as number;
    const answers = new Map<number, Uint8Array>();
    const sizes = new Set<number>();
    for (let bucket = 0; bucket < 2 ** bits; bucket++) {
      const r = await privateGateway.request(`/v1/lookup/${bits}/${bucketHex(bucket, bits)}`);
      expect(r.status).toBe(200);
      sizes.add(r.bytes.length);
      answers.set(bucket, new Uint8Array(r.bytes));
    }
    expect(sizes.size).toBe(1);

    const plain = await plainAnswers(plainGateway, [...audited, ...NEVER]);
    // Fetched before the verifications, which keep the event loop busy for a while.
    const absences = new Map<string, unknown>();
    for (const domain of NEVER) absences.set(domain, (await plainGateway.request(`/v1/absence?domain=${domain}`)).json);
    const differing: string[] = [];
    for (const [i, domain] of [...audited, ...NEVER].entries()) {
      const answer = answers.get(bucketOf(hashOf(domain), bits));
      const privately = verifyCompactAnswer({ domain, answer: answer!, statement, keySet });
      const record = plain.get(domain)!;
      if (isNeverAudited(record) || i % 50 === 0) {
        const absence = isNeverAudited(record) ? { proof: absences.get(domain) } : undefined;
        const openly = verifyAnswer({ answer: record, keySet, domain, ...(absence ? { absence } : {}) });
        if (privately.code !== openly.code) differing.push(`${domain}: ${privately.code} privately, ${openly.code} plainly`);
      }
      // An audited domain's entry commits to the very record the plain lookup serves (so its verdict is the same).
      if (!isNeverAudited(record) && (privately.code !== null || recordMatchesEntry(privately.entry!, record) !== null)) {
        differing.push(`${domain}: ${privately.code} privately, not the plain record's entry`);
      }
    }
    expect(differing).toEqual([]);

    const requests = privateGateway.logs.filter((l) => l.msg === 'request');
    expect(requests.length).toBe(2 ** bits + 1);
    const logged = privateGateway.logs.map((l) => JSON.stringify(l)).join('\n');
    const scrape = await (await fetch(privateGateway.gateway.metricsUrl!)).text();
    expect([...audited, ...NEVER].filter((d) => logged.includes(d) || scrape.includes(d))).toEqual([]);
  });
});
