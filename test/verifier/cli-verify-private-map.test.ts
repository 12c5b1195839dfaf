/**
 * Answers altered in flight (a proxy in front of the real gateway, over a real logged v2 build).
 * `mvr verify DOMAIN --private --log` asks a compact answer: one byte of it flipped anywhere (its
 * header, an entry, the proof, the padding) leaves no verdict, with the compact answer's exit code;
 * unaltered through the same proxy, it verifies. `verifyPrefixAnswer` (the JSON prefix answer): a
 * record of the asker's run put back from the build before (the same domain, validly signed), or
 * replaced by `{"junk":true}`, and padded again to the signed size, is refused RECORD_NOT_IN_MAP,
 * although the asker's own record is untouched.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { KEY_SET_PATH, verifyPrefixAnswer } from '@merchant-verify/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hexPrefix, paddedPart } from '#shared';
import { sha256 } from '../../core/crypto/hash.ts';
import { exitCodeOf } from '../../core/errors/errors.ts';
import { BUILD_STATEMENT_FILE, CURRENT_LINK } from '../../core/layout.ts';
import { runCli } from '../support/cli.ts';
import { cleanup, type TestGateway } from '../support/gateway.ts';
import { DEC, gatewayOver, loggedProject, NOV, vkeyFile } from '../support/logged-project.ts';
import { livePackedRecords } from '../support/packs.ts';
import { build } from '../support/project.ts';

type Answer = { records: unknown[]; padding: string; prefix: string } & Record<string, unknown>;

let g: TestGateway;
let proxy: Server;
let proxyUrl: string;
let vkey: string;
/** The domain asked, and another domain of its run (same prefix). */
let asker: string;
let other: string;
/** `other`'s record of the build before. */
let older: Record<string, unknown>;
/** Hex digits of every prefix asked of the build. */
let prefixLength: number;
/** Which byte of a compact answer the proxy flips before passing it on (null: none). */
let flip: ((length: number) => number) | null = null;

/** `count` audits of `run<i>.example`: enough domains that some prefix holds two or more. */
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

/** The answer with its records changed, padded again to the size its build signed (as a forger would). */
function repadded(a: Answer, records: unknown[]): Answer {
  const size = Buffer.byteLength(paddedPart(a as never));
  const part = { ...a, records, padding: '' };
  return { ...part, padding: ' '.repeat(size - Buffer.byteLength(paddedPart(part as never))) };
}

beforeAll(async () => {
  const p = await loggedProject();
  await writeFile(join(p.auditsDir, 'run.jsonl'), audits(40));
  await build(p, { now: NOV });
  const november = await recordsByDomain(p);
  await build(p, { now: DEC });
  const statement = JSON.parse(await readFile(join(p.recordsDir, CURRENT_LINK, BUILD_STATEMENT_FILE), 'utf8')) as {
    lookup: { prefix_length: number };
  };
  prefixLength = statement.lookup.prefix_length;
  const byPrefix = new Map<string, string[]>();
  for (const d of (await recordsByDomain(p)).keys()) {
    const prefix = hexPrefix(sha256(Buffer.from(d)), prefixLength);
    byPrefix.set(prefix, [...(byPrefix.get(prefix) ?? []), d]);
  }
  [asker, other] = [...byPrefix.values()].find((ds) => ds.length >= 2)! as [string, string];
  older = november.get(other)!;
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
const recordOf = (a: Answer, domain: string) => a.records.findIndex((r) => (r as { domain?: unknown }).domain === domain);
const forgeries: [string, (a: Answer) => Answer][] = [
  [
    'another record of the run put back from the build before (validly signed)',
    (a) =>
      repadded(
        a,
        a.records.map((r, i) => (i === recordOf(a, other) ? older : r)),
      ),
  ],
  [
    'another record of the run replaced by {"junk":true}',
    (a) =>
      repadded(
        a,
        a.records.map((r, i) => (i === recordOf(a, other) ? { junk: true } : r)),
      ),
  ],
];

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

describe('a JSON prefix answer with a record its build did not commit to', () => {
  it.each(forgeries)('%s: verifyPrefixAnswer refuses it, with the log key or without', async (_, f) => {
    const res = await fetch(`${g.url}/v1/lookup/${hexPrefix(sha256(Buffer.from(asker)), prefixLength)}`, {
      headers: { authorization: `Bearer ${g.key}` },
    });
    const genuine = (await res.json()) as Answer;
    const keySet = await (await fetch(`${g.url}${KEY_SET_PATH}`)).json();
    expect(verifyPrefixAnswer({ domain: asker, answer: genuine, keySet, log: { vkey } }).code).toBeNull();
    for (const log of [{ log: { vkey } }, {}])
      expect(verifyPrefixAnswer({ domain: asker, answer: f(genuine), keySet, ...log }).code).toBe('RECORD_NOT_IN_MAP');
  });
});
