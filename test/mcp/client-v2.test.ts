/**
 * The gateway's MCP endpoint and `mvr mcp` driven by the official 2.x client
 * (@modelcontextprotocol/client), which speaks the newest protocol revision; the 1.x client
 * (the other files of this folder) still gets the 2025 revisions it asks for.
 */

import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { firstText } from '../support/mcp.ts';
import { GOLD, makeProject, ROOT } from '../support/project.ts';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway(await makeProject());
});
afterAll(cleanup);

/** The newest revision the 2.x SDK speaks: the client insists on it (no fallback to the 2025 handshake). */
const NEWEST = '2026-07-28';
const newestClient = () => new Client({ name: 'mvr-test-v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: NEWEST } } });

function httpClient(key: string): { client: Client; transport: StreamableHTTPClientTransport } {
  const transport = new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  return { client: newestClient(), transport };
}

describe('the 2.x MCP client over HTTP', () => {
  it('lists verify_merchant and gets the very bytes GET /v1/verify serves', async () => {
    const { client, transport } = httpClient(gw.key);
    await client.connect(transport);
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['verify_merchant', 'verify_merchants', 'merchant_history']);
      const result = await client.callTool({ name: 'verify_merchant', arguments: { domain: `https://www.${GOLD}/tents` } });
      expect(result.isError).toBeFalsy();
      expect(firstText(result)).toBe((await gw.verify(GOLD)).text);
      expect(result.structuredContent).toMatchObject({ valid: true, record: { domain: GOLD, status: 'verified', tier: 'gold' } });
      // A revision newer than any the 1.x client speaks.
      expect({ era: client.getProtocolEra(), version: client.getNegotiatedProtocolVersion() }).toEqual({ era: 'modern', version: NEWEST });
    } finally {
      await client.close();
    }
  });

  it('an invalid domain is an isError result starting with its registry code', async () => {
    const { client, transport } = httpClient(gw.key);
    await client.connect(transport);
    try {
      const result = await client.callTool({ name: 'verify_merchant', arguments: { domain: 'co.uk' } });
      expect(result.isError).toBe(true);
      expect(firstText(result)).toMatch(/^INVALID_DOMAIN \(Invalid domain\): /);
    } finally {
      await client.close();
    }
  });

  it('a wrong key cannot connect', async () => {
    const { client, transport } = httpClient('mvr_0000000000_notavalidkeynotavalidkeynotavalidkeynotavali');
    await expect(client.connect(transport)).rejects.toThrow();
  });
});

describe('the 2.x MCP client over stdio (mvr mcp)', () => {
  it('answers from the local records with the stored bytes', async () => {
    const p = gw.project;
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [join(ROOT, 'bin/mvr.js'), 'mcp', '--records', p.recordsDir, '--public', p.publicDir],
      stderr: 'pipe',
    });
    const client = newestClient();
    await client.connect(transport);
    try {
      const result = await client.callTool({ name: 'verify_merchant', arguments: { domain: GOLD } });
      expect(result.isError).toBeFalsy();
      expect(firstText(result)).toBe((await gw.verify(GOLD)).text);
      expect({ era: client.getProtocolEra(), version: client.getNegotiatedProtocolVersion() }).toEqual({ era: 'modern', version: NEWEST });
    } finally {
      await client.close();
    }
  });
});
