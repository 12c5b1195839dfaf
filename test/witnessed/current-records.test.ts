/**
 * Newest means last for records (decision 0077), with three real witnesses and real builds: a store
 * pointed back at last month's build serves a merchant flagged this month as last month's verified
 * record, validly signed and logged. Checked with the log, a record is tied to its build by its
 * bundle, so `mvr verify D --log` (and `--policy`), the package's verifyOnline and the MCP tools refuse
 * it as BUILD_SUPERSEDED when its proofs are made against the newest checkpoint; rolled back with its
 * own old checkpoint, it holds under a maximum age only while that checkpoint's cosignatures are
 * fresh (MCP's `max_age` too). A bundle fetched from that store is refused offline likewise.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type AnswerSource, gatewaySource, parsePolicy, verdictOf, verifyBundle, verifyOnline } from '@merchant-verify/verifier';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exitCodeOf } from '../../core/errors/registry.ts';
import { BUILD_CHECKPOINT_FILE, BUILD_SERVED_CHECKPOINT_FILE } from '../../core/layout.ts';
import { BIN, runCli } from '../support/cli.ts';
import { HOUR, ROLLED_BACK_SETTINGS, TURNED, type TwoWitnessedMonths, twoWitnessedMonths } from '../support/current-project.ts';
import { cleanup, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { vkeyFile } from '../support/logged-project.ts';
import { connectHttpClient } from '../support/mcp.ts';
import { removeTempDirs, tempDir, UNAUDITED } from '../support/project.ts';

let t: TwoWitnessedMonths;
let w: TwoWitnessedMonths['w'];
let vkey: string;
let nov: string;
let dec: string;
let novCosignedAt: number;
let keySet: unknown;

beforeAll(async () => {
  t = await twoWitnessedMonths();
  ({ w, vkey, nov, dec, novCosignedAt } = t);
  keySet = JSON.parse(await readFile(join(w.p.publicDir, '.well-known', 'merchant-verify-keys.json'), 'utf8'));
});
afterAll(async () => {
  await cleanup();
  await w.close();
  await removeTempDirs();
});

type Structured = { valid: boolean; code: string | null; current: true | null; claims: { status: string } };
/** verify_merchant's structured result. */
const verifyTool = async (client: Client, args: Record<string, unknown>) =>
  (await client.callTool({ name: 'verify_merchant', arguments: args })) as unknown as { structuredContent: Structured; isError?: boolean };

/** verify_merchants' verdict codes, one a domain in order. */
const batchCodes = async (client: Client, args: Record<string, unknown>) => {
  const r = (await client.callTool({ name: 'verify_merchants', arguments: args })) as unknown as {
    structuredContent: { results: { verification?: { code: string | null } }[] };
  };
  return r.structuredContent.results.map((x) => x.verification?.code);
};

/** `mvr mcp --base-url` spawned from the built bin: its lookups go to the gateway over HTTP. */
async function remoteMcp(g: TestGateway): Promise<Client> {
  const client = new Client({ name: 'mvr-current-records', version: '1.0.0' });
  const args = [BIN, 'mcp', '--base-url', g.url, '--api-key', g.key];
  await client.connect(new StdioClientTransport({ command: process.execPath, args, stderr: 'ignore' }));
  return client;
}

/** `mvr verify --bundle FILE` offline, with the published keys and the log's key. */
const offline = (file: string, args: string[] = []) =>
  runCli(['verify', '--bundle', file, '--keys', w.p.publicDir, '--log-key', vkeyFile(w.p), '--json', ...args]);

/** Runs `run` with the store's `current` pointed at November, then puts it back. */
async function rolledBack<T>(run: () => Promise<T>): Promise<T> {
  await t.pointCurrentAt(nov);
  try {
    return await run();
  } finally {
    await t.pointCurrentAt(dec);
  }
}

describe.sequential("a record is current when its bundle's statement is the last entry of its checkpoint", () => {
  it("the live build's record holds with the log, its bundle proving it current; a source without bundles says it is not proven", async () => {
    await t.withGateway(async (g) => {
      const v = await t.online(g, TURNED, { policy: true });
      expect(v.code).toBeNull();
      expect(v.answer.status).toBe('flagged');
      expect(v).toMatchObject({ log: { valid: true }, place: { valid: true }, statement: { valid: true } });
      const run = await t.cli(g, [TURNED]);
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ valid: true, current: true, place: { valid: true }, statement: { valid: true } });
      // An old gateway (no /v1/bundle): the record's own log proof holds, and its currency is said to be unproven.
      const { bundle: _none, ...noBundles } = gatewaySource({ baseUrl: g.url, apiKey: g.key });
      const old = await verifyOnline({ domain: TURNED, source: noBundles, vkey, log: true });
      expect(old.code).toBeNull();
      expect('place' in old).toBe(false);
      const saved = join(await tempDir(), 'record.json');
      await writeFile(saved, (await g.request(`/v1/verify?domain=${TURNED}`)).text);
      const proof = join(await tempDir(), 'record.proof');
      await writeFile(proof, (await g.request(`/v1/proof?domain=${TURNED}`)).text);
      const offlineRecord = ['verify', '--file', saved, '--proof', proof, '--keys', w.p.publicDir, '--log-key', vkeyFile(w.p), '--log'];
      const file = await runCli(offlineRecord);
      expect(file.code, file.stderr).toBe(0);
      expect(file.stdout).toMatch(/^\s+current\s+NOT PROVEN: /m);
      const json = await runCli([...offlineRecord, '--json']);
      expect(json.code, json.stderr).toBe(0);
      expect(JSON.parse(json.stdout)).toMatchObject({ valid: true, current: null });
    });
  });

  it('rolled back, its proofs against the newest checkpoint: BUILD_SUPERSEDED by --log, --policy, verifyOnline, MCP and the bundle', async () => {
    // December's checkpoint holds November's statement and records too: the log only grows.
    await writeFile(join(t.buildDir(nov), BUILD_SERVED_CHECKPOINT_FILE), await readFile(join(t.buildDir(dec), BUILD_CHECKPOINT_FILE)));
    try {
      await rolledBack(() =>
        t.withGateway(async (g) => {
          // Last month's record, validly signed, its own log proof holding: only its build's place in the log tells.
          expect((await g.verify(TURNED)).json.status).toBe('verified');
          for (const [policy, maxAgeMs] of ROLLED_BACK_SETTINGS) {
            const v = await t.online(g, TURNED, { policy, maxAgeMs });
            expect(v.code, `policy ${policy}, max age ${maxAgeMs}`).toBe('BUILD_SUPERSEDED');
            expect(v).toMatchObject({
              log: { valid: true },
              place: { valid: true },
              statement: { valid: false, code: 'BUILD_SUPERSEDED' },
            });
            // Its compact answer: last month's entry (verified), under last month's superseded statement.
            const pv = await t.privately(g, TURNED, policy, maxAgeMs);
            expect(pv.code, `private, policy ${policy}, max age ${maxAgeMs}`).toBe('BUILD_SUPERSEDED');
          }
          const exit = exitCodeOf('BUILD_SUPERSEDED');
          for (const args of [[TURNED], [TURNED, '--policy', w.policyFile]]) {
            const run = await t.cli(g, args);
            expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(exit);
            expect(JSON.parse(run.stdout)).toMatchObject({ valid: false, code: 'BUILD_SUPERSEDED', current: null });
          }
          // MCP: the gateway's own /mcp and `mvr mcp --base-url` over it, with include_proof (the log check).
          const clients = [await connectHttpClient(g.url, g.key), await remoteMcp(g)];
          try {
            for (const client of clients) {
              const r = await verifyTool(client, { domain: TURNED, include_proof: true });
              expect(r.structuredContent).toMatchObject({ valid: false, code: 'BUILD_SUPERSEDED', current: null });
            }
          } finally {
            for (const client of clients) await client.close();
          }
          // The bundle it serves: refused offline, by verifyBundle and by `mvr verify --bundle`.
          const bundle = (await g.request(`/v1/bundle?domain=${TURNED}`)).json;
          expect(verdictOf(verifyBundle({ bundle, keySet, log: { vkey } })).code).toBe('BUILD_SUPERSEDED');
          const file = join(await tempDir(), 'turned.bundle.json');
          const out = await runCli(['verify', TURNED, '--bundle-out', file, '--base-url', g.url, '--api-key', g.key, '--log', '--json']);
          expect(out.code, out.stderr).toBe(exit);
          const kept = await offline(file);
          expect(kept.code, kept.stderr).toBe(exit);
          expect(JSON.parse(kept.stdout)).toMatchObject({ valid: false, code: 'BUILD_SUPERSEDED' });
        }),
      );
    } finally {
      await rm(join(t.buildDir(nov), BUILD_SERVED_CHECKPOINT_FILE));
    }
  });

  it('an online client that read a record and its bundle of two builds looks once more; twice is BUNDLE_MISMATCH', async () => {
    await t.withGateway(async (g) => {
      const real = gatewaySource({ baseUrl: g.url, apiKey: g.key });
      // November's record of the domain and its log proof, as a client could read them just before December went live.
      const novRecord = (await g.request(`/v1/verify?domain=${TURNED}&build=${nov}`)).json;
      const novProof = (await g.request(`/v1/proof?domain=${TURNED}&build=${nov}`)).text;
      let answers = 0;
      let proofs = 0;
      const source: Partial<AnswerSource> = {
        ...real,
        answer: async (d) => (++answers === 1 ? novRecord : real.answer(d)),
        proof: async (d) => (++proofs === 1 ? novProof : real.proof(d)),
      };
      const v = await verifyOnline({ domain: TURNED, source, vkey, log: true });
      expect({ code: v.code, answers, status: v.answer.status }).toEqual({ code: null, answers: 2, status: 'flagged' });
      const stuck: Partial<AnswerSource> = { ...real, answer: async () => novRecord, proof: async () => novProof };
      const twice = await verifyOnline({ domain: TURNED, source: stuck, vkey, log: true });
      expect(twice).toMatchObject({ code: 'BUNDLE_MISMATCH', log: { valid: true } });
    });
  });

  it('rolled back with its own old checkpoint: accepted under a maximum age while its cosignatures are fresh, refused once older', async () => {
    const maxAgeMs = 36 * HOUR;
    const fresh = novCosignedAt + 35 * HOUR;
    const stale = novCosignedAt + 37 * HOUR;
    await rolledBack(() =>
      t.withGateway(async (g) => {
        expect((await t.online(g, TURNED, { policy: true, maxAgeMs, now: fresh })).code).toBeNull();
        expect((await t.online(g, TURNED, { policy: true, maxAgeMs, now: stale })).code).toBe('NOT_WITNESSED');
        // Its bundle, kept: the same verdicts offline, as of either time.
        const policy = parsePolicy(t.policyText);
        const bundle = (await g.request(`/v1/bundle?domain=${TURNED}`)).json;
        expect(verifyBundle({ bundle, keySet, log: { vkey }, policy, maxAgeMs, now: fresh }).code).toBeNull();
        expect(verifyBundle({ bundle, keySet, log: { vkey }, policy, maxAgeMs, now: stale }).code).toBe('NOT_WITNESSED');
        const file = join(await tempDir(), 'turned-own.bundle.json');
        await writeFile(file, JSON.stringify(bundle));
        const at = (ms: number) => ['--policy', w.policyFile, '--max-age', '36h', '--at', new Date(ms).toISOString()];
        expect((await offline(file, at(fresh))).code).toBe(0);
        const old = await offline(file, at(stale));
        expect(old.code, old.stderr).toBe(exitCodeOf('NOT_WITNESSED'));
        expect(JSON.parse(old.stdout)).toMatchObject({ valid: false, code: 'NOT_WITNESSED' });
      }),
    );
  });

  it("MCP's max_age, with the gateway's witness policy: a stale answer refused, a fresh one accepted (records, absences, private; one and a batch)", async () => {
    const clock = { ms: novCosignedAt + 35 * HOUR };
    const project = { ...w.p, apiKeysFile: join(w.p.keysDir, 'api-keys.json') };
    await rolledBack(async () => {
      const g = await startTestGateway(project, {
        now: () => clock.ms,
        witnessPolicy: { text: t.policyText, policy: parsePolicy(t.policyText) },
      });
      const client = await connectHttpClient(g.url, g.key);
      try {
        const asks = [{ domain: TURNED }, { domain: UNAUDITED }, { domain: TURNED, private: true }];
        for (const ask of asks) {
          const r = await verifyTool(client, { ...ask, max_age: '36h' });
          expect(r.structuredContent.code, JSON.stringify(ask)).toBe(ask.domain === UNAUDITED ? 'NEVER_AUDITED' : null);
          // Without max_age, nothing refuses an answer for its age.
          expect((await verifyTool(client, ask)).structuredContent.code).toBe(r.structuredContent.code);
        }
        // verify_merchants takes it too, plain and private.
        for (const priv of [false, true])
          expect(await batchCodes(client, { domains: [TURNED, UNAUDITED], private: priv, max_age: '36h' })).toEqual([
            null,
            'NEVER_AUDITED',
          ]);
        clock.ms = novCosignedAt + 37 * HOUR;
        for (const ask of asks)
          expect((await verifyTool(client, { ...ask, max_age: '36h' })).structuredContent.code, JSON.stringify(ask)).toBe('NOT_WITNESSED');
        for (const priv of [false, true]) {
          const domains = [TURNED, UNAUDITED];
          expect(await batchCodes(client, { domains, private: priv, max_age: '36h' }), `private ${priv}`).toEqual([
            'NOT_WITNESSED',
            'NOT_WITNESSED',
          ]);
          expect(await batchCodes(client, { domains, private: priv }), `private ${priv}, no max_age`).toEqual([null, 'NEVER_AUDITED']);
        }
        const bad = await verifyTool(client, { domain: TURNED, max_age: 'soon' });
        expect(bad.isError).toBe(true);
        expect(JSON.stringify(bad)).toContain('INVALID_USAGE');
      } finally {
        await client.close();
        await g.close();
      }
    });
  });
});
