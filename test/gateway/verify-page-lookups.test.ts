/**
 * Lookups from the verify page in a real headless Chromium (as test/gateway/verify-page.test.ts):
 * private by default (the domain normalized and hashed in the browser, only a prefix of its hash
 * sent), with the same verdicts as the plain lookup, and nothing the page sends or the gateway
 * logs names the domain; unticked, the plain lookup refuses another domain's record.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { needing } from '../support/programs.ts';
import { makeProject } from '../support/project.ts';
import { CHROMIUM, lookUpOnPage, openPage } from '../support/verify-page.ts';

describe.skipIf(!CHROMIUM.path)(needing(CHROMIUM, "the verify page's lookups in headless Chromium"), () => {
  let g: TestGateway;
  let browser: Browser;
  let page: Page;
  const GOLD = 'acme-outdoor.example';

  beforeAll(async () => {
    g = await startTestGateway(await makeProject());
    ({ browser, page } = await openPage(`${g.url}/verify`));
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await g?.close();
    await cleanup();
  });

  const lookUp = (domain: string) => lookUpOnPage(page, domain, g.key);

  it('looks up privately by default: the same verdicts as a plain lookup, and no request the gateway logs names the domain', async () => {
    const NEVER = 'never-audited-private.example';
    const sent: string[] = [];
    const onRequest = (r: { url(): string }) => sent.push(r.url());
    const from = g.logs.length;
    page.on('request', onRequest);
    const gold = await lookUp(`https://www.${GOLD}/tents`);
    const goldNote = await page.locator('#note').innerText();
    const never = await lookUp(NEVER);
    page.off('request', onRequest);
    const to = g.logs.length;
    // Privately the verdict is GOLD's map entry's: its claims and its record's hash; the record itself is not fetched.
    expect(gold).toMatchObject({ state: 'valid', verdict: 'Verified from its map entry' });
    expect(gold.details).toMatch(/Lookupprivate: only the bucket \d+\/[0-9a-f]+ of the domain's hash was sent/);
    expect(gold.details).toMatch(/Record hash[A-Za-z0-9+/]{43}=/);
    expect(gold.details).toMatch(/Statusverified.*Tiergold.*Score93\.5/);
    expect(goldNote).toMatch(/^The record itself was not fetched/);
    expect(never).toMatchObject({ state: 'absent', verdict: 'Never audited: absence proven' });
    expect(await page.locator('#note').innerText()).toMatch(new RegExp(`^${NEVER.replace(/\./g, '\\.')} has no record in build `));
    // The same verdicts a plain lookup gives.
    await page.getByLabel('Private lookup').uncheck();
    try {
      expect(await lookUp(GOLD)).toMatchObject({ state: 'valid', verdict: 'Valid signature' });
      expect(await lookUp(NEVER)).toMatchObject({ state: 'absent', verdict: 'Never audited: absence proven' });
    } finally {
      await page.getByLabel('Private lookup').check();
    }
    // What the page sent while private, and what the gateway logged of it: the statement and buckets, never a domain
    // (an answer is the same for every caller of a build, so the browser may take a bucket's from its cache).
    const lookups = sent.filter((u) => u.includes('/v1/lookup')).map((u) => new URL(u).pathname);
    expect(lookups.length).toBeGreaterThanOrEqual(2);
    for (const path of lookups) expect(path).toMatch(/^\/v1\/lookup(\/\d+\/[0-9a-f]+)?$/);
    const logged = g.logs.slice(from, to);
    expect(logged.some((l) => l.msg === 'request' && /^\/v1\/lookup\/\d+\/[0-9a-f]+$/.test(String(l.path)))).toBe(true);
    for (const text of [...sent, ...logged.map((l) => JSON.stringify(l))])
      for (const name of [GOLD, NEVER, 'acme-outdoor', 'never-audited-private']) expect(text).not.toContain(name);
  });

  it('refuses a validly signed record of another domain as the answer to a lookup (DOMAIN_MISMATCH)', async () => {
    const other = (await g.verify('bluebird-books.example')).text;
    expect(JSON.parse(other)).toMatchObject({ domain: 'bluebird-books.example', signature: expect.any(String) });
    // A gateway (or anything between) answering with another shop's record.
    await page.evaluate(() => (document.getElementById('result')!.dataset.state = 'idle'));
    await page.route('**/v1/verify?*', (route) => route.fulfill({ status: 200, contentType: 'application/json', body: other }));
    await page.getByLabel('Private lookup').uncheck();
    try {
      await page.getByLabel('Domain or URL').fill(`https://www.${GOLD}/tents`);
      await page.getByLabel('API key').fill(g.key);
      await page.getByRole('button', { name: 'Look up and verify' }).click();
      await page.waitForFunction(() => document.getElementById('result')?.dataset.state !== 'idle');
      expect(await page.locator('#verdict').textContent()).toBe('Not verified: DOMAIN_MISMATCH');
      await page.evaluate(() => (document.getElementById('result')!.dataset.state = 'idle'));
    } finally {
      await page.unroute('**/v1/verify?*');
      await page.getByLabel('Private lookup').check();
    }
  });
});
