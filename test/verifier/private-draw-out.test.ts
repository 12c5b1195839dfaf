/**
 * Nothing drawn out: against a stub gateway that refuses every prefix (and passes the statement
 * through from the real gateway), `mvr verify --private` and the package's client send the one
 * prefix length the live statement signs, once, and fail; the hash bits that reached the gateway
 * are that length's, never more. A statement asking for more than its build's size allows is not
 * followed at all.
 */
import { gatewaySource, verifyOnlineCompact, verifyOnlinePrivately } from '@merchant-verify/verifier';
import { describe, expect, it } from 'vitest';
import { prefixLengthFor } from '#shared';
import { runCli } from '../support/cli.ts';
import { GOLD } from '../support/project.ts';
import { startRefusingGateway } from '../support/refusing-gateway.ts';
import { gw, useGoldGateway } from '../support/verify-cli.ts';

useGoldGateway();

describe('a gateway that refuses every prefix', () => {
  it('learns no more bits than the signed length from the CLI or the package', async () => {
    const stub = await startRefusingGateway(gw.url);
    try {
      const { statement } = (await gw.request('/v1/lookup')).json;
      const signedBits = statement.lookup.prefix_length * 4;
      expect(statement.lookup.prefix_length).toBe(prefixLengthFor(statement.domain_map.size));

      const cli = await runCli(['verify', GOLD, '--private', '--json', '--base-url', stub.url, '--api-key', gw.key]);
      expect(cli.code).not.toBe(0);
      expect(stub.bitsReached()).toBe(signedBits);
      const sentByCli = stub.paths.filter((p) => p.startsWith('/v1/lookup/')).length;
      expect(sentByCli).toBe(1);

      await expect(
        verifyOnlinePrivately({ domain: GOLD, source: gatewaySource({ baseUrl: stub.url, apiKey: gw.key }) }),
      ).rejects.toMatchObject({
        code: 'FETCH_FAILED',
      });
      expect(stub.bitsReached()).toBe(signedBits);
      expect(stub.paths.filter((p) => p.startsWith('/v1/lookup/')).length).toBe(sentByCli + 1);
    } finally {
      await stub.stop();
    }
  });

  it("learns the statement's bucket bits from the compact client, once, and no more", async () => {
    const stub = await startRefusingGateway(gw.url);
    try {
      const { statement } = (await gw.request('/v1/lookup')).json;
      await expect(
        verifyOnlineCompact({ domain: GOLD, source: gatewaySource({ baseUrl: stub.url, apiKey: gw.key }) }),
      ).rejects.toMatchObject({
        code: 'FETCH_FAILED',
      });
      expect(stub.bitsReached()).toBe(statement.lookup.bits);
      expect(stub.paths.filter((p) => p.startsWith('/v1/lookup/'))).toHaveLength(1);
    } finally {
      await stub.stop();
    }
  });

  it('sends nothing when the statement asks for more digits than its size allows', async () => {
    const { statement } = (await gw.request('/v1/lookup')).json;
    const source = {
      ...gatewaySource({ baseUrl: gw.url, apiKey: gw.key }),
      lookupStatement: async () => ({ statement: { ...statement, lookup: { ...statement.lookup, prefix_length: 8 } } }),
    };
    const asked: string[] = [];
    const prefix = source.prefix!;
    source.prefix = (p: string) => {
      asked.push(p);
      return prefix(p);
    };
    await expect(verifyOnlinePrivately({ domain: GOLD, source })).rejects.toMatchObject({ code: 'FETCH_FAILED' });
    expect(asked).toEqual([]);
  });
});
