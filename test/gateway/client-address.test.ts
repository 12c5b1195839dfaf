/**
 * The per-address limit behind a proxy, for IPv6 callers and under a flood of new addresses:
 * `--trust-proxy` takes the client from `Forwarded` / `X-Forwarded-For` only from a trusted peer
 * and only as far as trusted proxies vouch; an IPv6 client counts by its /64; and no number of new
 * callers resets a count whose window is still running.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { addressCounter, clientAddress, parseTrustedProxies } from '../../access/client-address.ts';
import { FixedWindowLimiter } from '../../access/rate-limit.ts';
import { runCli } from '../support/cli.ts';
import { cleanup, startTestGateway } from '../support/gateway.ts';
import { expectProblem } from '../support/gateway-expect.ts';
import { GOLD, makeProject } from '../support/project.ts';

afterAll(cleanup);

const PROXIES = parseTrustedProxies('10.0.0.0/8, 2001:db8:ffff::/48 192.0.2.7');

describe('the client of a request', () => {
  it('is the peer when the peer is no trusted proxy, whatever the headers say', () => {
    const headers = { 'x-forwarded-for': '203.0.113.9', forwarded: 'for=203.0.113.9' };
    expect(clientAddress('198.51.100.1', headers, PROXIES)).toBe('198.51.100.1');
    expect(clientAddress('10.1.2.3', headers, null)).toBe('10.1.2.3');
    expect(clientAddress('::ffff:198.51.100.1', {}, PROXIES)).toBe('198.51.100.1');
  });

  it('from a trusted proxy, is the rightmost address no trusted proxy owns', () => {
    // The client put a made-up address first; the proxies appended what they saw.
    const xff = { 'x-forwarded-for': '1.1.1.1, 203.0.113.9, 10.0.0.2' };
    expect(clientAddress('10.0.0.1', xff, PROXIES)).toBe('203.0.113.9');
    expect(clientAddress('::ffff:192.0.2.7', xff, PROXIES)).toBe('203.0.113.9');
    const forwarded = { forwarded: 'for=1.1.1.1, for="[2001:db8:1:2::7]:4711";proto=https, for=10.0.0.2;by=10.0.0.1' };
    expect(clientAddress('10.0.0.1', forwarded, PROXIES)).toBe('2001:db8:1:2::7');
    // Every hop trusted: the leftmost is the client.
    expect(clientAddress('10.0.0.1', { 'x-forwarded-for': '10.9.9.9, 10.0.0.2' }, PROXIES)).toBe('10.9.9.9');
    // An entry that is no address ends the walk at the trusted hop that wrote it.
    expect(clientAddress('10.0.0.1', { forwarded: 'for=unknown, for=10.0.0.2' }, PROXIES)).toBe('10.0.0.2');
    expect(clientAddress('10.0.0.1', { forwarded: 'for=_hidden' }, PROXIES)).toBe('10.0.0.1');
  });

  it('from a trusted proxy with two headers telling two stories, is the proxy: a forger cannot pick a fresh count', () => {
    const both = { forwarded: 'for=203.0.113.50', 'x-forwarded-for': '203.0.113.9' };
    expect(clientAddress('10.0.0.1', both, PROXIES)).toBe('10.0.0.1');
    expect(clientAddress('10.0.0.1', { ...both, forwarded: 'for=203.0.113.9' }, PROXIES)).toBe('203.0.113.9');
  });

  it('counts an IPv6 address by its /64, an IPv4 address alone', () => {
    expect(addressCounter('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64');
    expect(addressCounter('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(addressCounter('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressCounter('::1')).toBe('0:0:0:0::/64');
    expect(addressCounter('64:ff9b::192.0.2.1')).toBe('64:ff9b:0:0::/64');
    expect(addressCounter('2001:db8:1:3::1')).not.toBe(addressCounter('2001:db8:1:2::1'));
    expect(addressCounter('203.0.113.9')).toBe('203.0.113.9');
  });

  it('`--trust-proxy` that is not a list of addresses or CIDRs stops serve at start, naming the entry', async () => {
    for (const bad of ['10.0.0.0/33', 'proxy.example', '2001:db8::/129', ',']) {
      const r = await runCli(['serve', '--trust-proxy', bad, '--port', '0']);
      expect(r.code, bad).toBe(2);
      expect(r.stderr).toContain('--trust-proxy / MVR_TRUST_PROXY');
    }
  });
});

describe('the counter table', () => {
  it('never drops a count whose window runs: new callers past the bound share one overflow count', () => {
    let now = 0;
    const limiter = new FixedWindowLimiter('unauthenticated', 3, 60, 100, () => now);
    expect([1, 2, 3, 4].map(() => limiter.take('victim').allowed)).toEqual([true, true, true, false]);
    for (let i = 0; i < 10_000; i++) limiter.take(`caller-${i}`);
    expect(limiter.callers).toBe(100);
    // The flood did not reset the first caller's count, and itself was refused past one quota.
    expect(limiter.take('victim').allowed).toBe(false);
    expect(limiter.take('yet another').allowed).toBe(false);
    expect(limiter.refusals).toBeGreaterThanOrEqual(10_000 - 99 - 3);
    // Once the windows have ended, a new caller gets a count of its own again.
    now = 60_000;
    expect(limiter.take('yet another')).toMatchObject({ allowed: true, remaining: 2 });
    expect(limiter.callers).toBeLessThanOrEqual(100);
  });
});

describe('the per-address limit behind a trusted proxy', () => {
  it('counts each forwarded client apart, IPv6 by its /64, and ignores the headers from an untrusted peer', async () => {
    const project = await makeProject();
    const behind = await startTestGateway(project, { unauthenticatedPerMinute: 2, trustProxy: parseTrustedProxies('127.0.0.1') });
    const from = (address: string) => behind.verify(GOLD, { key: null, headers: { 'x-forwarded-for': address } });
    expect([(await from('203.0.113.1')).status, (await from('203.0.113.1')).status]).toEqual([401, 401]);
    expectProblem(await from('203.0.113.1'), 429, 'RATE_LIMITED');
    expect((await from('203.0.113.2')).status).toBe(401);
    expect([(await from('2001:db8:1:2::1')).status, (await from('2001:db8:1:2::ffff')).status]).toEqual([401, 401]);
    expect((await from('2001:db8:1:2:aaaa::1')).status).toBe(429);
    expect((await from('2001:db8:1:3::1')).status).toBe(401);

    // Without --trust-proxy the same headers name nobody: every request is the peer's.
    const direct = await startTestGateway(project, { unauthenticatedPerMinute: 2 });
    const statuses = [];
    for (const address of ['203.0.113.1', '203.0.113.2', '203.0.113.3'])
      statuses.push((await direct.verify(GOLD, { key: null, headers: { 'x-forwarded-for': address } })).status);
    expect(statuses).toEqual([401, 401, 429]);
  });
});
