/**
 * `npm run bench:ohttp [-- --lookups N]`: what a private lookup costs through Oblivious HTTP
 * beside the same lookup sent directly, on one gateway over the sample audits: the round trip
 * (direct, sealed straight to the gateway, sealed through the test relay), the bytes on the wire
 * each way, and the gateway's own work per sealed request (opening it and sealing its answer,
 * in-process, without the HTTP around it). Each figure is a median of N runs, in the same run.
 */
import { createHash } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { BHttpEncoder } from 'bhttp-js';
import { bucketHex, bucketOf } from '#shared';
import { createApiKey } from '../access/api-keys.ts';
import { runBuild } from '../builder/build.ts';
import { boundedPost } from '../clients/bounded-get.ts';
import { ohttpFetch } from '../clients/ohttp-client.ts';
import { READ_LIMITS } from '../core/limits.ts';
import { decapsulateRequest, encapsulateRequest, OHTTP_MEDIA } from '../core/ohttp.ts';
import { defaultSchemaUrl } from '../core/rules/record.ts';
import { startGateway } from '../gateway/server.ts';
import { createOhttpKey } from '../keyring/ohttp-key.ts';
import { keygen } from '../keyring/signing-keys.ts';
import { startOhttpRelay } from '../test/support/ohttp-relay.ts';

const { values } = parseArgs({ options: { lookups: { type: 'string', default: '200' } } });
const N = Number(values.lookups);
const fmt = (x: number, d = 2) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const root = await mkdtemp(join(tmpdir(), 'mvr-bench-ohttp-'));
const keysDir = join(root, 'keys');
await keygen(keysDir);
const ohttpKey = await createOhttpKey(keysDir);
const issuer = 'merchant-verify.example';
const recordsDir = join(root, 'records');
const publicDir = join(root, 'public');
await runBuild({
  auditsDir: 'audits',
  recordsDir,
  publicDir,
  keysDir,
  issuer,
  schemaUrl: defaultSchemaUrl(issuer),
  signingKey: undefined,
  now: Date.now(),
});
const apiKeysFile = join(keysDir, 'api-keys.json');
const { key } = await createApiKey(apiKeysFile, 'bench');
const gateway = await startGateway({
  records: { url: recordsDir, publicDir },
  apiKeysFile,
  issuer,
  schemaUrl: defaultSchemaUrl(issuer),
  host: '127.0.0.1',
  port: 0,
  cacheBytes: 16 * 1024 * 1024,
  refreshMs: 1000,
  accessLog: false,
  log: () => undefined,
  rateLimitPerMinute: 1_000_000,
  ohttpKey,
});
const relay = await startOhttpRelay(gateway.url);
const init = { headers: { authorization: `Bearer ${key}` } };
// The bucket a client asks, of the bits the live statement gives.
const { statement } = (await (await fetch(`${gateway.url}/v1/lookup`, init)).json()) as { statement: { lookup: { bits: number } } };
const bits = statement.lookup.bits;
const bucket = bucketHex(bucketOf(createHash('sha256').update('never-audited-shop.example').digest(), bits), bits);
const url = `${gateway.url}/v1/lookup/${bits}/${bucket}`;
const sealedDirect = ohttpFetch(`${gateway.url}/.well-known/ohttp-gateway`, ohttpKey.configBytes);
const throughRelay = ohttpFetch(relay.url, ohttpKey.configBytes);

async function timed(ask: () => Promise<Response>): Promise<{ ms: number; bytes: number }> {
  const runs: number[] = [];
  let bytes = 0;
  for (let i = 0; i < N + 10; i++) {
    const started = performance.now();
    const res = await ask();
    bytes = (await res.arrayBuffer()).byteLength;
    if (res.status !== 200) throw new Error(`status ${res.status}`);
    if (i >= 10) runs.push(performance.now() - started);
  }
  return { ms: median(runs), bytes };
}

// The reference for the sealed round trips: a POST of the same size to a server that answers at
// once, with the client the sealed requests use (on a loaded loopback, a POST's round trip is
// mostly its transport's, whatever the server does).
const bare = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': OHTTP_MEDIA.response }).end(Buffer.alloc(5_000)));
});
await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}/`;
const barePost = await timed(async () => {
  const r = await boundedPost(bareUrl, new Uint8Array(179), {
    limit: READ_LIMITS.gatewayAnswer,
    headers: { 'content-type': OHTTP_MEDIA.request },
  });
  return new Response(new Uint8Array(r.body), { status: r.statusCode });
});
bare.close();
const direct = await timed(() => fetch(url, init));
const sealed = await timed(() => sealedDirect(url, init));
const relayed = await timed(() => throughRelay(url, init));
const sealedBytes = relay.saw.at(-1)!.body.length;

// The gateway's own work per sealed request: open it, seal an answer of the lookup's size.
const inner = await new BHttpEncoder().encodeRequest(new Request(url, init));
const answer = new Uint8Array(direct.bytes);
const work: number[] = [];
const client: number[] = [];
for (let i = 0; i < N + 10; i++) {
  const sealing = performance.now();
  const request = await encapsulateRequest(ohttpKey.config, inner);
  const started = performance.now();
  const opened = await decapsulateRequest(ohttpKey, request.bytes);
  const sealedAnswer = opened!.sealResponse(answer);
  const opening = performance.now();
  request.response.open(sealedAnswer);
  if (i >= 10) {
    work.push(opening - started);
    client.push(started - sealing + (performance.now() - opening));
  }
}

console.log(`Oblivious HTTP, ${N} compact lookups each (median), sample audits, answer ${fmt(direct.bytes, 0)} bytes`);
console.log(`  direct GET /v1/lookup/{bits}/{hex}     ${fmt(direct.ms)} ms`);
console.log(`  a bare POST of 179 bytes (reference)   ${fmt(barePost.ms)} ms`);
console.log(`  sealed, straight to the gateway        ${fmt(sealed.ms)} ms`);
console.log(`  sealed, through the test relay         ${fmt(relayed.ms)} ms`);
console.log(`  gateway: open + seal one request       ${fmt(median(work), 3)} ms`);
console.log(`  client: seal one request, open answer   ${fmt(median(client), 3)} ms`);
console.log(`  sealed request on the wire             ${fmt(sealedBytes, 0)} bytes (inner request ${fmt(inner.length, 0)})`);
await relay.close();
await gateway.close();
