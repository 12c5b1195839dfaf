/**
 * The verifier package's online client (`verifyOnline` over `gatewaySource`) against a real
 * gateway over a real logged build: what it fetches, the one key set re-fetch an unknown key
 * gets, the one re-lookup a proof of a newer record or a HAS_RECORD gets (a caller's source
 * standing for the gateway that rotated or went live between two requests), and the size cap and
 * deadline of each read (an origin that answers too much, or holds its answer).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type AnswerSource, gatewaySource, verdictOf, verifyOnline } from '@merchant-verify/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, type TestGateway } from '../support/gateway.ts';
import { holdingOrigin } from '../support/holding-origin.ts';
import { gatewayOver, loggedProject, NOV } from '../support/logged-project.ts';
import { build, GOLD, removeTempDirs, tempDir, UNAUDITED } from '../support/project.ts';

let g: TestGateway;
let gateway: AnswerSource;

beforeAll(async () => {
  const p = await loggedProject();
  await build(p, { now: NOV });
  g = await gatewayOver(p);
  gateway = gatewaySource({ baseUrl: g.url, apiKey: g.key });
});
afterAll(async () => {
  await cleanup();
  await removeTempDirs();
});

/** `source` with calls to each function counted. */
function counted(source: AnswerSource) {
  const calls = { answer: 0, absence: 0, proof: 0, keySet: 0, logKey: 0, bundle: 0 };
  const wrapped = Object.fromEntries(
    Object.entries(source).map(([name, fn]) => [
      name,
      (...args: unknown[]) => {
        calls[name as keyof typeof calls]++;
        return (fn as (...a: unknown[]) => unknown)(...args);
      },
    ]),
  ) as unknown as AnswerSource;
  return { source: wrapped, calls };
}

describe('verifyOnline through a gateway', () => {
  it('a record with its log proof: valid, each resource fetched once, its bundle tying it to the live build', async () => {
    const { source, calls } = counted(gateway);
    const v = await verifyOnline({ domain: GOLD, source, log: true });
    expect(verdictOf(v)).toEqual({ valid: true, code: null, message: null });
    expect(v.log).toMatchObject({ valid: true });
    expect(v).toMatchObject({ place: { valid: true }, statement: { valid: true, statementLog: { index: expect.any(Number) } } });
    expect(calls).toEqual({ answer: 1, absence: 0, proof: 1, keySet: 1, logKey: 1, bundle: 1 });
    // Without the log, nothing asks for the build's currency: no bundle.
    const plain = counted(gateway);
    expect((await verifyOnline({ domain: GOLD, source: plain.source })).code).toBeNull();
    expect(plain.calls.bundle).toBe(0);
  });

  it('a never-audited domain: its absence proof decides, NEVER_AUDITED (not valid), its statement in the log', async () => {
    const v = await verifyOnline({ domain: UNAUDITED, source: gateway, log: true });
    expect(verdictOf(v)).toMatchObject({ valid: false, code: 'NEVER_AUDITED' });
    expect(v.absence).toMatchObject({ valid: true, statementLog: { index: expect.any(Number) } });
  });

  it('a key set without the key that signed: fetched once more, and only once', async () => {
    const real = await gateway.keySet();
    const stale = { keys: (real as { keys: { kid: string }[] }).keys.map((k) => ({ ...k, kid: `${k.kid}-old` })) };
    let served = 0;
    const rotating = counted({ ...gateway, keySet: async () => (served++ === 0 ? stale : real) });
    expect((await verifyOnline({ domain: GOLD, source: rotating.source })).code).toBeNull();
    expect(rotating.calls.keySet).toBe(2);
    const never = counted({ ...gateway, keySet: async () => stale });
    expect((await verifyOnline({ domain: GOLD, source: never.source })).code).toBe('UNKNOWN_KEY');
    expect(never.calls.keySet).toBe(2);
  });

  it('a proof of another record (a build went live between the two requests): both looked up once more', async () => {
    const other = await gateway.proof('bluebird-books.example');
    let asked = 0;
    const once = counted({ ...gateway, proof: async (d) => (asked++ === 0 ? other : gateway.proof(d)) });
    expect((await verifyOnline({ domain: GOLD, source: once.source, log: true })).code).toBeNull();
    expect(once.calls).toMatchObject({ answer: 2, proof: 2 });
    const always = counted({ ...gateway, proof: async () => other });
    expect((await verifyOnline({ domain: GOLD, source: always.source, log: true })).code).toBe('NOT_INCLUDED');
    expect(always.calls).toMatchObject({ answer: 2, proof: 2 });
  });

  it('an "unverified" answer for a domain the gateway has a record of: looked up once more, then the record', async () => {
    const record = (await gateway.answer(GOLD)) as Record<string, unknown>;
    const { key_id: _k, signature: _s, ...made } = { ...record, status: 'unverified', tier: null, score: null } as Record<string, unknown>;
    let asked = 0;
    const once = counted({ ...gateway, answer: async (d) => (asked++ === 0 ? made : gateway.answer(d)) });
    expect((await verifyOnline({ domain: GOLD, source: once.source })).code).toBeNull();
    expect(once.calls).toMatchObject({ answer: 2, absence: 1 });
    const always = await verifyOnline({ domain: GOLD, source: { ...gateway, answer: async () => made } });
    expect(verdictOf(always)).toMatchObject({ valid: false, code: 'NOT_ABSENT', message: expect.stringContaining('has a record') });
  });

  it('a gateway refusing the key: FETCH_FAILED with the status and the problem code', async () => {
    const refused = gatewaySource({ baseUrl: g.url, apiKey: 'mvr_0000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' });
    await expect(verifyOnline({ domain: GOLD, source: refused })).rejects.toMatchObject({
      code: 'FETCH_FAILED',
      status: 401,
      problem: 'UNAUTHORIZED',
    });
  });
});

describe('gatewaySource: bounded reads', () => {
  it('an answer larger than a record may be is refused, a held one fails at the deadline given', async () => {
    const dir = await tempDir();
    await mkdir(join(dir, 'v1'), { recursive: true });
    await writeFile(join(dir, 'v1', 'verify'), Buffer.alloc(65 * 1024, 0x20));
    await writeFile(join(dir, 'v1', 'absence'), '{}');
    const origin = await holdingOrigin(dir);
    try {
      const big = gatewaySource({ baseUrl: origin.url, apiKey: 'k' });
      await expect(big.answer(GOLD)).rejects.toMatchObject({
        code: 'FETCH_FAILED',
        message: expect.stringMatching(/more than the 65536 bytes/),
      });
      const held = origin.hold('v1/absence');
      const slow = gatewaySource({ baseUrl: origin.url, apiKey: 'k', timeoutMs: 50 });
      const failed = expect(slow.absence(GOLD)).rejects.toMatchObject({
        code: 'FETCH_FAILED',
        message: expect.stringMatching(/within 50 ms/),
      });
      await held.reached;
      await failed;
      held.release();
    } finally {
      await origin.close();
    }
  });
});
