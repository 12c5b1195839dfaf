/**
 * Oblivious HTTP (RFC 9458, RFC 9540): private lookups sealed to the gateway's key and sent
 * through a test relay (a third party's stand-in). What each side saw is checked: the relay the
 * caller's address and sealed bytes (no prefix, no key); the gateway the relay's address only,
 * the prefix and the key id (its access line, as a direct lookup's). The verdicts are the
 * direct lookup's; a key configuration the build did not sign is refused before any prefix is sent; an
 * inner request for a route not offered is refused inside the sealed answer; what cannot be
 * opened is refused in the clear with its code.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { bucketHex, bucketOf, gatewaySource, verifyOnlineCompact } from '@merchant-verify/verifier';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BHttpEncoder } from 'bhttp-js';
import { afterAll, describe, expect, it } from 'vitest';
import { fetchKeyConfig, ohttpFetch, ohttpSource } from '../../clients/ohttp-client.ts';
import { exitCodeOf } from '../../core/errors/errors.ts';
import { encapsulateRequest, keyConfigSha256, OHTTP_MEDIA, ohttpKeyFromSeed, parseKeyConfigs } from '../../core/ohttp.ts';
import { createOhttpKey, loadOhttpKey, OHTTP_KEY_FILE } from '../../keyring/ohttp-key.ts';
import { BIN, runCli } from '../support/cli.ts';
import { cleanup, startTestGateway, waitForLog } from '../support/gateway.ts';
import { startOhttpRelay } from '../support/ohttp-relay.ts';
import { readCurrentRecords } from '../support/outputs.ts';
import { build, makeProject, tempDir, UNAUDITED } from '../support/project.ts';

afterAll(cleanup);

describe('Oblivious HTTP through a relay', async () => {
  const project = await makeProject({ build: false });
  await createOhttpKey(project.keysDir);
  await build(project);
  const ohttpKey = (await loadOhttpKey(project.keysDir))!;
  const g = await startTestGateway(project, { rateLimitPerMinute: 10_000, ohttpKey });
  const relay = await startOhttpRelay(g.url);
  afterAll(() => relay.close());
  const peers: (string | undefined)[] = [];
  g.gateway.server.on('request', (req) => peers.push(req.socket.remoteAddress));
  const keyConfig = await fetchKeyConfig(g.url);
  const domains = [...(await readCurrentRecords(project.recordsDir)).keys()].slice(0, 3).concat(UNAUDITED);

  it('keeps the private key 0600 in the keys folder only: nothing the build publishes holds it', async () => {
    const file = join(project.keysDir, OHTTP_KEY_FILE);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const seed = (await readFile(file, 'utf8')).split(' ')[1]!.trim();
    for (const dir of [project.publicDir, project.recordsDir]) {
      for (const name of await readdir(dir, { recursive: true })) {
        const path = join(dir, name);
        if (!(await stat(path)).isFile()) continue;
        const bytes = await readFile(path);
        expect(bytes.includes(seed) || bytes.includes(Buffer.from(seed, 'hex')), path).toBe(false);
      }
    }
  });

  it('publishes its key configuration as application/ohttp-keys, the one the build signed (no warning at start)', async () => {
    const r = await g.request('/.well-known/ohttp-gateway', { key: null });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe(OHTTP_MEDIA.keys);
    expect(r.bytes).toEqual(ohttpKey.configBytes);
    expect(parseKeyConfigs(r.bytes).publicKey).toEqual(ohttpKey.config.publicKey);
    const statement = (await g.request('/v1/lookup')).json?.statement;
    expect(statement.ohttp).toEqual({ key_config_sha256: keyConfigSha256(r.bytes) });
    // The live build was read for that lookup, and its statement names this key: nothing to warn of.
    expect(g.logs.filter((l) => String(l.msg).includes('Oblivious HTTP'))).toEqual([]);
  });

  it('gives each domain the direct lookup verdict; the relay sees no prefix or key, the gateway only the relay', async () => {
    const direct = gatewaySource({ baseUrl: g.url, apiKey: g.key });
    const relayed = ohttpSource({ baseUrl: g.url, apiKey: g.key, relayUrl: relay.url, keyConfig });
    const logsBefore = g.logs.length;
    peers.length = 0;
    for (const domain of domains) {
      const through = await verifyOnlineCompact({ domain, source: relayed });
      const plain = await verifyOnlineCompact({ domain, source: direct });
      expect({ domain, code: through.code, entry: through.entry, bucket: through.bucket }).toEqual({
        domain,
        code: plain.code,
        entry: plain.entry,
        bucket: plain.bucket,
      });
      expect(through.code === null || through.code === 'NEVER_AUDITED').toBe(true);
    }
    const sent = relay.saw.map((s) => s.body.toString('latin1')).join('\n');
    expect(relay.saw.length).toBeGreaterThanOrEqual(domains.length);
    for (const s of relay.saw) {
      expect(s.from).toBe('127.0.0.1');
      expect(s.headers['content-type']).toBe(OHTTP_MEDIA.request);
      expect(s.headers.authorization).toBeUndefined();
    }
    // Sealed: neither a lookup's path (its prefix) nor a domain nor the key is in what the relay carried.
    for (const domain of domains) expect(sent).not.toContain(domain);
    expect(sent).not.toContain('/v1/lookup/');
    expect(sent).not.toContain(g.key);
    // The gateway: the direct lookups came from the caller's address, the relayed ones from the relay's only.
    expect(new Set(peers)).toEqual(new Set(['127.0.0.1', relay.outboundAddress]));
    const lines = g.logs.slice(logsBefore).filter((l) => l.msg === 'request') as unknown as { path: string; key_id: string | null }[];
    // The statement and a bucket, relayed and direct, for each domain: nothing else under /v1/lookup.
    for (const l of lines.filter((l) => l.path.startsWith('/v1/lookup'))) expect(l.path).toMatch(/^\/v1\/lookup(\/\d+\/[0-9a-f]+)?$/);
    const relayedLookups = lines.filter((l) => l.path.startsWith('/v1/lookup/'));
    expect(relayedLookups.length).toBe(domains.length * 2);
    expect(relayedLookups.every((l) => l.key_id === g.keyId)).toBe(true);
    expect(lines.filter((l) => l.path === '/.well-known/ohttp-gateway').every((l) => l.key_id === null)).toBe(true);
  });

  it('budgets a relayed lookup by the API key inside it', async () => {
    const remaining = (r: Response) => Number(/;r=(\d+)/.exec(r.headers.get('ratelimit') ?? '')?.[1]);
    const fetchThrough = ohttpFetch(relay.url, keyConfig.bytes);
    const bits = (await g.request('/v1/lookup')).json.statement.lookup.bits as number;
    const prefix = `${bits}/${bucketHex(bucketOf(createHash('sha256').update(UNAUDITED).digest(), bits), bits)}`;
    const ask = () => fetchThrough(`${g.url}/v1/lookup/${prefix}`, { headers: { authorization: `Bearer ${g.key}` } });
    const a = await ask();
    const b = await ask();
    expect(a.status).toBe(200);
    expect(remaining(a) - remaining(b)).toBe(1);
    const noKey = await fetchThrough(`${g.url}/v1/lookup/${prefix}`);
    expect(noKey.status).toBe(401);
    const head = await fetchThrough(`${g.url}/v1/lookup/${prefix}`, { method: 'HEAD', headers: { authorization: `Bearer ${g.key}` } });
    expect(head.status).toBe(200);
    expect(Number(head.headers.get('content-length'))).toBe((await a.arrayBuffer()).byteLength);
    expect((await head.arrayBuffer()).byteLength).toBe(0);
  });

  it('sends no prefix when the statement does not verify against the key set the caller trusts', async () => {
    const logsBefore = g.logs.length;
    const real = (await g.request('/.well-known/merchant-verify-keys.json', { key: null })).json as { keys: { kid: string }[] };
    const otherKeys = { ...real, keys: real.keys.map((k) => ({ ...k, kid: `other-${k.kid}` })) };
    const source = ohttpSource({ baseUrl: g.url, apiKey: g.key, relayUrl: relay.url, keyConfig, keySet: async () => otherKeys });
    const error = await verifyOnlineCompact({ domain: UNAUDITED, source }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'OHTTP_KEY_CONFIG_INVALID', message: expect.stringContaining('STATEMENT_NOT_SIGNED') });
    const paths = g.logs.slice(logsBefore).map((l) => (l as unknown as { path?: string }).path);
    expect(paths).toContain('/v1/lookup');
    expect(paths.filter((path) => path?.startsWith('/v1/lookup/'))).toEqual([]);
  });

  it('refuses a key configuration the build did not sign, before any prefix is sent', async () => {
    const other = await ohttpKeyFromSeed(0, new Uint8Array(32).fill(7));
    const own = await startTestGateway(project, { ohttpKey: other });
    const ownRelay = await startOhttpRelay(own.url);
    try {
      // Its operator is told at start.
      await waitForLog(
        own,
        (l) => l.level === 'warn' && String(l.msg).startsWith('the Oblivious HTTP key is not the one the live build signed'),
      );
      const tampered = await fetchKeyConfig(own.url);
      const source = ohttpSource({ baseUrl: own.url, apiKey: own.key, relayUrl: ownRelay.url, keyConfig: tampered });
      const error = await verifyOnlineCompact({ domain: UNAUDITED, source }).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'OHTTP_KEY_CONFIG_INVALID' });
      // Asked straight for a bucket, the client still fetches the statement first and stops there.
      const { bits } = (await own.request('/v1/lookup')).json.statement.lookup as { bits: number };
      const straight = await source.compact!(bits, bucketHex(bucketOf(createHash('sha256').update(UNAUDITED).digest(), bits), bits)).catch(
        (e: unknown) => e,
      );
      expect(straight).toMatchObject({ code: 'OHTTP_KEY_CONFIG_INVALID' });
      // The gateway was asked for its statement (and key set) through the relay, never for a prefix.
      const relayedPaths = own.logs
        .filter((l) => l.msg === 'request')
        .map((l) => (l as unknown as { path: string }).path)
        .filter((path) => path.startsWith('/v1/lookup'));
      expect(relayedPaths.filter((path) => path !== '/v1/lookup')).toEqual([]);
      expect(relayedPaths).toContain('/v1/lookup');
    } finally {
      await ownRelay.close();
      await own.close();
    }
    // A configuration whose bytes were changed on the way: the gateway cannot open what is sealed to it.
    const changed = Buffer.from(keyConfig.bytes);
    changed[10] = changed[10]! ^ 0xff;
    const r = await ohttpFetch(relay.url, changed)(`${g.url}/v1/lookup`, { headers: { authorization: `Bearer ${g.key}` } });
    expect(r.status).toBe(400);
    expect((await r.json()).code).toBe('OHTTP_DECAPSULATION_FAILED');
  });

  it('refuses, sealed, a request for a route not offered through it; in the clear what it cannot open', async () => {
    const fetchThrough = ohttpFetch(relay.url, keyConfig.bytes);
    const verify = await fetchThrough(`${g.url}/v1/verify?domain=${UNAUDITED}`, { headers: { authorization: `Bearer ${g.key}` } });
    expect(verify.status).toBe(403);
    expect((await verify.json()).code).toBe('OHTTP_ROUTE_REFUSED');
    const nested = await fetchThrough(`${g.url}/.well-known/ohttp-gateway`, { method: 'POST', body: 'x' });
    expect((await nested.json()).code).toBe('OHTTP_ROUTE_REFUSED');
    // Another key id: RFC 9458's key configuration problem, 422.
    const inner = await new BHttpEncoder().encodeRequest(new Request(`${g.url}/v1/lookup`));
    const wrongId = await encapsulateRequest({ ...parseKeyConfigs(keyConfig.bytes), keyId: 9 }, inner);
    const post = (body: Uint8Array, type: string = OHTTP_MEDIA.request): Promise<Response> =>
      fetch(`${g.url}/.well-known/ohttp-gateway`, { method: 'POST', headers: { 'content-type': type }, body: new Uint8Array(body) });
    const problem = async (r: Response) => ({ status: r.status, code: ((await r.json()) as { code: string }).code });
    expect(await problem(await post(wrongId.bytes))).toEqual({ status: 422, code: 'OHTTP_KEY_UNKNOWN' });
    const flipped = (await encapsulateRequest(parseKeyConfigs(keyConfig.bytes), inner)).bytes;
    flipped[flipped.length - 1] = flipped[flipped.length - 1]! ^ 1;
    expect(await problem(await post(flipped))).toEqual({ status: 400, code: 'OHTTP_DECAPSULATION_FAILED' });
    expect(await problem(await post(flipped, 'application/json'))).toEqual({ status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' });
    expect(await problem(await post(new Uint8Array(70 * 1024)))).toEqual({ status: 413, code: 'PAYLOAD_TOO_LARGE' });
  });

  it('mvr verify --private --ohttp-relay: the same verdicts, exit 25 for a key configuration the build did not sign', async () => {
    const gatewayArgs = (t: { url: string; key: string }) => ['--base-url', t.url, '--api-key', t.key];
    const seen = relay.saw.length;
    const record = await runCli(['verify', domains[0]!, '--private', '--ohttp-relay', relay.url, '--json', ...gatewayArgs(g)]);
    expect(record.code).toBe(0);
    expect(JSON.parse(record.stdout)).toMatchObject({ domain: domains[0], valid: true, private: true });
    const absent = await runCli(['verify', UNAUDITED, '--private', '--ohttp-relay', relay.url, ...gatewayArgs(g)]);
    expect(absent.code).toBe(exitCodeOf('NEVER_AUDITED'));
    expect(relay.saw.length).toBeGreaterThan(seen);
    expect((await runCli(['verify', UNAUDITED, '--ohttp-relay', relay.url, ...gatewayArgs(g)])).code).toBe(2);
    const own = await startTestGateway(project, { ohttpKey: await ohttpKeyFromSeed(0, new Uint8Array(32).fill(9)) });
    const ownRelay = await startOhttpRelay(own.url);
    try {
      const refused = await runCli(['verify', UNAUDITED, '--private', '--ohttp-relay', ownRelay.url, ...gatewayArgs(own)]);
      expect(refused.code).toBe(exitCodeOf('OHTTP_KEY_CONFIG_INVALID'));
      expect(refused.code).toBe(25);
    } finally {
      await ownRelay.close();
      await own.close();
    }
  });

  it('mvr mcp --base-url --ohttp-relay: verify_merchant private goes through the relay, with the direct verdict', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp', '--base-url', g.url, '--api-key', g.key, '--ohttp-relay', relay.url],
      cwd: project.root,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'ohttp-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      for (const domain of [domains[0]!, UNAUDITED]) {
        const seen = relay.saw.length;
        const before = peers.length;
        const through = await client.callTool({ name: 'verify_merchant', arguments: { domain, private: true } });
        const direct = await verifyOnlineCompact({ domain, source: gatewaySource({ baseUrl: g.url, apiKey: g.key }) });
        expect(relay.saw.length).toBeGreaterThan(seen);
        // The MCP server's own requests for the lookup reached the gateway only from the relay.
        expect(new Set(peers.slice(before, before + relay.saw.length - seen))).toEqual(new Set([relay.outboundAddress]));
        expect((through.structuredContent as { code: string | null }).code).toBe(direct.code);
      }
    } finally {
      await client.close();
    }
  });

  it('mvr keygen --ohttp makes the key once and prints the hash the build will sign', async () => {
    const keys = join(await tempDir(), 'keys');
    const made = await runCli(['keygen', '--ohttp', '--keys', keys, '--json']);
    expect(made.code).toBe(0);
    const printed = JSON.parse(made.stdout) as { key_config_sha256: string };
    expect(printed.key_config_sha256).toBe(keyConfigSha256(await readFile(join(keys, 'ohttp-keys.bin'))));
    expect((await runCli(['keygen', '--ohttp', '--keys', keys])).code).toBe(exitCodeOf('INVALID_CONFIG'));
  });

  it('is 404 on a gateway without a key', async () => {
    const plain = await startTestGateway(project);
    try {
      expect((await plain.request('/.well-known/ohttp-gateway', { key: null })).status).toBe(404);
    } finally {
      await plain.close();
    }
  });
});
