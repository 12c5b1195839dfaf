/**
 * The MCP tools when the gateway has a witness policy (`--witness-policy`): a real logged build
 * whose checkpoint real witnesses cosigned, a real gateway on its own clock, a real MCP client.
 * With the policy the verify tools' last text item says when the log was last witnessed (or why
 * not); without one the answers are as they were.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parsePolicy } from '@merchant-verify/verifier';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../support/cli.ts';
import { type BuildWitness, buildPolicy, cosignBuild, startBuildWitnesses } from '../support/cosign-build.ts';
import { cleanup, startTestGateway } from '../support/gateway.ts';
import { loggedProject, NOV } from '../support/logged-project.ts';
import { connectHttpClient } from '../support/mcp.ts';
import { build, GOLD, ISSUER, type Project, removeTempDirs, tempDir, UNAUDITED } from '../support/project.ts';

const COSIGNED = Date.parse('2026-11-02T00:00:00Z');
const QUORUM = 'group two 2 pay shop glass\nquorum two';
let witnesses: BuildWitness[];
const clients: Record<'witnessed' | 'others' | 'none' | 'stdioLocal' | 'stdioGateway', Client> = {} as never;

/** `mvr mcp ...args` spawned from the built bin, with an SDK client on its stdio. */
async function spawnMcp(args: string[]): Promise<Client> {
  const client = new Client({ name: 'mvr-witness-test', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', ...args], stderr: 'ignore' }));
  return client;
}

beforeAll(async () => {
  const p: Project = await loggedProject();
  await build(p, { now: NOV });
  witnesses = await startBuildWitnesses(p, ['pay', 'shop', 'glass'], COSIGNED);
  const text = await buildPolicy(p, witnesses, QUORUM);
  await cosignBuild(p, text);
  const others = await startBuildWitnesses(p, ['pay', 'shop', 'glass'], COSIGNED);
  const otherText = await buildPolicy(p, others, QUORUM);
  for (const w of others) await w.close();
  const project = { ...p, apiKeysFile: join(p.keysDir, 'api-keys.json') };
  const gateway = (policy?: string) =>
    startTestGateway(project, {
      now: () => COSIGNED + 3_600_000,
      ...(policy === undefined ? {} : { witnessPolicy: { text: policy, policy: parsePolicy(policy) } }),
    });
  // One after the other: each adds its API key to the one key file.
  const a = await gateway(text);
  const b = await gateway(otherText);
  const c = await gateway();
  clients.witnessed = await connectHttpClient(a.url, a.key);
  clients.others = await connectHttpClient(b.url, b.key);
  clients.none = await connectHttpClient(c.url, c.key);
  const file = join(await tempDir(), 'witnesses.policy');
  await writeFile(file, text);
  clients.stdioLocal = await spawnMcp(['--records', p.recordsDir, '--public', p.publicDir, '--issuer', ISSUER, '--witness-policy', file]);
  clients.stdioGateway = await spawnMcp(['--base-url', c.url, '--api-key', c.key, '--witness-policy', file]);
});
afterAll(async () => {
  for (const c of Object.values(clients)) await c.close();
  for (const w of witnesses) await w.close();
  await cleanup();
  await removeTempDirs();
});

type Content = { type: string; text: string }[];
const call = async (client: Client, name: string, args: Record<string, unknown>) =>
  ((await client.callTool({ name, arguments: args })) as { content: Content; isError?: boolean }).content;
const lastJson = (content: Content) => JSON.parse(content.at(-1)!.text) as Record<string, unknown>;

describe('MCP tools with a witness policy', () => {
  it('verify_merchant, with and without include_proof, and for a never-audited domain: when last witnessed, by whom', async () => {
    for (const args of [{ domain: GOLD }, { domain: GOLD, include_proof: true }, { domain: UNAUDITED }]) {
      const content = await call(clients.witnessed, 'verify_merchant', args);
      expect(lastJson(content), JSON.stringify(args)).toEqual({
        witnessed: {
          witnessed_at: new Date(COSIGNED).toISOString(),
          cosigners: expect.arrayContaining([{ witness: 'pay', time: new Date(COSIGNED).toISOString() }]),
        },
      });
    }
  });

  it('verify_merchants: the same, after the results', async () => {
    const content = await call(clients.witnessed, 'verify_merchants', { domains: [GOLD, UNAUDITED] });
    expect(content).toHaveLength(2);
    expect(lastJson(content)).toMatchObject({ witnessed: { witnessed_at: new Date(COSIGNED).toISOString() } });
  });

  it('mvr mcp --witness-policy, over local folders and over a gateway: the same item', async () => {
    for (const client of [clients.stdioLocal, clients.stdioGateway]) {
      const content = await call(client, 'verify_merchant', { domain: GOLD });
      expect(lastJson(content)).toMatchObject({ witnessed: { witnessed_at: new Date(COSIGNED).toISOString() } });
    }
  });

  it('a policy of other witness keys: the answer is served, and says it is not witnessed', async () => {
    const content = await call(clients.others, 'verify_merchant', { domain: GOLD });
    expect(JSON.parse(content[0]!.text)).toMatchObject({ domain: GOLD });
    expect(lastJson(content)).toMatchObject({ witnessed: null, code: 'NOT_WITNESSED' });
    // The structured verification leads with the same verdict; with our policy it is valid, and says when witnessed.
    const others = (await clients.others.callTool({ name: 'verify_merchant', arguments: { domain: GOLD } })).structuredContent;
    expect(others).toMatchObject({ valid: false, code: 'NOT_WITNESSED', signature: { valid: true }, witnesses: { valid: false } });
    const ours = (await clients.witnessed.callTool({ name: 'verify_merchant', arguments: { domain: GOLD } })).structuredContent;
    expect(ours).toMatchObject({ valid: true, code: null, witnesses: { valid: true, witnessed_at: new Date(COSIGNED).toISOString() } });
  });

  it("verify_merchant private: the build statement's log and witness steps, valid with them only, and where its keys came from", async () => {
    const steps = {
      valid: true,
      code: null,
      log: { valid: true, index: expect.any(Number), tree_size: expect.any(Number) },
      witnesses: { valid: true, witnessed_at: new Date(COSIGNED).toISOString(), cosigners: expect.arrayContaining([expect.anything()]) },
    };
    // Over its own records the keys are the deployment's; over a gateway (mvr mcp --base-url) the key set is that gateway's, on first use.
    const own = (await clients.witnessed.callTool({ name: 'verify_merchant', arguments: { domain: GOLD, private: true } }))
      .structuredContent;
    expect(own).toMatchObject({ ...steps, trust: { key_set: 'pinned', log_key: 'policy' } });
    const remote = (await clients.stdioGateway.callTool({ name: 'verify_merchant', arguments: { domain: GOLD, private: true } }))
      .structuredContent;
    expect(remote).toMatchObject({ ...steps, trust: { key_set: 'first_use', log_key: 'policy' } });
    const others = (await clients.others.callTool({ name: 'verify_merchant', arguments: { domain: GOLD, private: true } }))
      .structuredContent;
    expect(others).toMatchObject({
      valid: false,
      code: 'NOT_WITNESSED',
      signature: null,
      statement: { valid: false, code: 'NOT_WITNESSED' },
      log: { valid: false, code: 'NOT_WITNESSED' },
      witnesses: { valid: false, code: 'NOT_WITNESSED' },
    });
  });

  it('without a policy, the answers are as they were: no witness item, no word of it in the descriptions', async () => {
    expect(await call(clients.none, 'verify_merchant', { domain: GOLD })).toHaveLength(1);
    expect(await call(clients.none, 'verify_merchants', { domains: [GOLD] })).toHaveLength(1);
    const { tools } = await clients.none.listTools();
    expect(tools.map((t) => t.description).join(' ')).not.toMatch(/witnessed/);
    const withPolicy = await clients.witnessed.listTools();
    expect(withPolicy.tools.find((t) => t.name === 'verify_merchant')?.description).toMatch(/"witnessed"/);
  });
});
