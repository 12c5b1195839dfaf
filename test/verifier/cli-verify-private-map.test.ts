/**
 * Answers altered in flight (a proxy in front of the real gateway, over a real logged v2 build).
 * `mvr verify DOMAIN --private --log` asks a compact answer: one byte of it flipped anywhere (its
 * header, an entry, the proof, the padding) leaves no verdict, with the compact answer's exit code;
 * unaltered through the same proxy, it verifies. A full record fetched after a proven entry (a
 * mirror's, a plain lookup's) that is the same domain's record of the build before (validly
 * signed), or `{"junk":true}`, is refused RECORD_NOT_IN_MAP; the build's own record matches.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { bucketHex, bucketOf, KEY_SET_PATH, recordMatchesEntry, verifyCompactAnswer } from '@merchant-verify/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../core/crypto/hash.ts';
import { exitCodeOf } from '../../core/errors/errors.ts';
import { runCli } from '../support/cli.ts';
import { cleanup, type TestGateway } from '../support/gateway.ts';
import { DEC, gatewayOver, loggedProject, NOV, vkeyFile } from '../support/logged-project.ts';
import { livePackedRecords } from '../support/packs.ts';
import { build } from '../support/project.ts';

let g: TestGateway;
let proxy: Server;
let proxyUrl: string;
let vkey: string;
/** The domain asked. */
const asker = 'run0.example';
/** The asker's record of the build before, and of the live build. */
let older: Record<string, unknown>;
let live: Record<string, unknown>;
/** Which byte of a compact answer the proxy flips before passing it on (null: none). */
let flip: ((length: number) => number) | null = null;

/** `count` audits of `run<i>.example`: a bucket holds more than one entry. */
const audits = (count: number) =>
  Array.from({ length: count }, (_, i) =>
    JSON.stringify({
      domain: `run${i}.example`,
      score: 60,
      sub_scores: { visibility: 50, recommendation_rate: 50, technical_readiness: 50 },
      evidence: { ok: true, coverage: 0.8, site_coverage: 0.7, engines_ran: ['chatgpt'] },
      archetype: 'retailer',
      first_seen: '2025-01-01T00:00:00Z',
      last_audited_at: '2026-10-01T00:00:00Z',
    }),
  ).join('\n');

const recordsByDomain = async (p: Parameters<typeof livePackedRecords>[0]) =>
  new Map(
    (await livePackedRecords(p)).map((b) => {
      const r = JSON.parse(b.toString('utf8')) as Record<string, unknown>;
      return [r.domain as string, r];
    }),
  );

beforeAll(async () => {
  const p = await loggedProject();
  await writeFile(join(p.auditsDir, 'run.jsonl'), audits(40));
  await build(p, { now: NOV });
  older = (await recordsByDomain(p)).get(asker)!;
  await build(p, { now: DEC });
  live = (await recordsByDomain(p)).get(asker)!;
  g = await gatewayOver(p);
  vkey = (await readFile(vkeyFile(p), 'utf8')).trim();
  proxy = createServer(async (req, res) => {
    const upstream = await fetch(`${g.url}${req.url}`, { headers: { authorization: req.headers.authorization ?? '' } });
    let body = Buffer.from(await upstream.arrayBuffer());
    if (flip && /^\/v1\/lookup\/\d+\/[0-9a-f]+$/.test(req.url ?? '') && upstream.status === 200) {
      body = Buffer.from(body);
      const at = flip(body.length);
      body[at] = body[at]! ^ 0x01;
    }
    res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
    res.end(body);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => proxy?.close(resolve));
  await cleanup();
});

const verifyCli = () => runCli(['verify', asker, '--private', '--log', '--json', '--base-url', proxyUrl, '--api-key', g.key]);

describe('a compact answer altered in flight', () => {
  it('unaltered through the proxy, verifies with the log (control)', async () => {
    flip = null;
    const r = await verifyCli();
    expect(JSON.parse(r.stdout)).toMatchObject({ domain: asker, valid: true, code: null, private: true, entry: { valid: true } });
    expect(r.code).toBe(0);
  });

  it.each([
    ['its header', () => 0],
    ['the middle', (n: number) => Math.floor(n / 2)],
    ['its last byte', (n: number) => n - 1],
  ])('one byte flipped in %s: mvr verify --private --log gives no verdict (exit 16)', async (_, at) => {
    flip = at;
    try {
      const r = await verifyCli();
      const out = JSON.parse(r.stdout);
      expect(out).toMatchObject({ domain: asker, valid: false, entry: null });
      expect(['MALFORMED_PREFIX_ANSWER', 'PREFIX_MISMATCH', 'PADDING_MISMATCH', 'INCOMPLETE_PREFIX_ANSWER']).toContain(out.code);
      expect(r.code).toBe(exitCodeOf('INCOMPLETE_PREFIX_ANSWER'));
    } finally {
      flip = null;
    }
  });
});

describe('a full record its build did not commit to', () => {
  it("the build before's record of the domain, or junk, is not the proven entry's: RECORD_NOT_IN_MAP", async () => {
    const lookup = (await (await fetch(`${g.url}/v1/lookup`, { headers: { authorization: `Bearer ${g.key}` } })).json()) as {
      statement: { lookup: { bits: number } };
      statement_proof: string;
    };
    const bits = lookup.statement.lookup.bits;
    const res = await fetch(`${g.url}/v1/lookup/${bits}/${bucketHex(bucketOf(sha256(Buffer.from(asker)), bits), bits)}`, {
      headers: { authorization: `Bearer ${g.key}` },
    });
    const keySet = await (await fetch(`${g.url}${KEY_SET_PATH}`)).json();
    const v = verifyCompactAnswer({
      domain: asker,
      answer: new Uint8Array(await res.arrayBuffer()),
      statement: lookup.statement,
      statementProof: lookup.statement_proof,
      keySet,
      log: { vkey },
    });
    expect(v.code).toBeNull();
    expect(recordMatchesEntry(v.entry!, live)).toBeNull();
    expect(older).not.toEqual(live);
    for (const record of [older, { junk: true }]) expect(recordMatchesEntry(v.entry!, record)).toMatchObject({ code: 'RECORD_NOT_IN_MAP' });
  });
});
