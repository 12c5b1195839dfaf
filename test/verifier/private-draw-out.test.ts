/**
 * Nothing drawn out: against a stub gateway that refuses every bucket (and passes the statement
 * through from the real gateway), `mvr verify --private`, `mvr mcp --base-url` (private by default)
 * and the package's compact client send the bits the live statement signs, once each, and fail; the
 * hash bits that reached the gateway are those, never more. A statement asking for more than its
 * build's size allows is not followed at all.
 */
import { gatewaySource, verifyOnlineCompact } from '@merchant-verify/verifier';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { bucketBitsFor } from '#shared';
import { BIN, runCli } from '../support/cli.ts';
import { GOLD } from '../support/project.ts';
import { startRefusingGateway } from '../support/refusing-gateway.ts';
import { gw, useGoldGateway } from '../support/verify-cli.ts';

useGoldGateway();

describe('a gateway that refuses every bucket', () => {
  it('learns no more bits than the statement signs from the CLI, MCP or the package, each asking once', async () => {
    const stub = await startRefusingGateway(gw.url);
    const asked = () => stub.paths.filter((p) => p.startsWith('/v1/lookup/')).length;
    try {
      const { statement } = (await gw.request('/v1/lookup')).json;
      const signedBits = statement.lookup.bits;
      expect(signedBits).toBe(bucketBitsFor(statement.domain_map.size));

      const cli = await runCli(['verify', GOLD, '--private', '--json', '--base-url', stub.url, '--api-key', gw.key]);
      expect(cli.code).not.toBe(0);
      expect(stub.bitsReached()).toBe(signedBits);
      expect(asked()).toBe(1);

      await expect(
        verifyOnlineCompact({ domain: GOLD, source: gatewaySource({ baseUrl: stub.url, apiKey: gw.key }) }),
      ).rejects.toMatchObject({ code: 'FETCH_FAILED' });
      expect(stub.bitsReached()).toBe(signedBits);
      expect(asked()).toBe(2);

      const client = new Client({ name: 'draw-out-test', version: '1.0.0' });
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [BIN, 'mcp', '--base-url', stub.url, '--api-key', gw.key],
          stderr: 'pipe',
        }),
      );
      try {
        const one = await client.callTool({ name: 'verify_merchant', arguments: { domain: GOLD } });
        expect(one.isError).toBe(true);
        const batch = await client.callTool({ name: 'verify_merchants', arguments: { domains: [GOLD, `www.${GOLD}`] } });
        expect(batch.isError).toBe(true);
      } finally {
        await client.close();
      }
      expect(stub.bitsReached()).toBe(signedBits);
      // One bucket for the call, one for the batch (both domains are GOLD): never a second, longer one.
      expect(asked()).toBe(4);
    } finally {
      await stub.stop();
    }
  });

  it('sends nothing when the statement asks for more bits than its size allows', async () => {
    const { statement } = (await gw.request('/v1/lookup')).json;
    const source = {
      ...gatewaySource({ baseUrl: gw.url, apiKey: gw.key }),
      lookupStatement: async () => ({ statement: { ...statement, lookup: { ...statement.lookup, bits: 30 } } }),
    };
    const asked: string[] = [];
    const compact = source.compact!;
    source.compact = (bits: number, hex: string) => {
      asked.push(`${bits}/${hex}`);
      return compact(bits, hex);
    };
    await expect(verifyOnlineCompact({ domain: GOLD, source })).rejects.toMatchObject({ code: 'FETCH_FAILED' });
    expect(asked).toEqual([]);
  });
});
