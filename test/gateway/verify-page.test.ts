/**
 * The verify page in a real headless Chromium (Debian's `chromium`, driven by playwright-core):
 * a valid record, a tampered one and an unsigned one pasted, and a lookup through the gateway,
 * each verified in the browser by @merchant-verify/verifier. The page loads nothing from any
 * other origin. A screenshot is kept for a person to look at (its path is printed).
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { makeProject } from '../support/project.ts';
import { needing, program } from '../support/programs.ts';

const CHROMIUM = program('chromium', 'chromium', ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome']);

describe.skipIf(!CHROMIUM.path)(needing(CHROMIUM, 'the verify page in headless Chromium'), () => {
  let g: TestGateway;
  let browser: Browser;
  let page: Page;
  const foreign: string[] = [];
  const GOLD = 'acme-outdoor.example';

  beforeAll(async () => {
    g = await startTestGateway(await makeProject());
    browser = await chromium.launch({ executablePath: CHROMIUM.path!, args: ['--no-sandbox'] });
    page = await browser.newPage();
    page.on('request', (r) => {
      if (!r.url().startsWith(g.url)) foreign.push(r.url());
    });
    await page.goto(`${g.url}/verify`);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await g?.close();
    await cleanup();
  });

  const paste = async (text: string) => {
    await page.getByLabel('Record (JSON)').fill(text);
    await page.getByRole('button', { name: 'Verify the record' }).click();
    await page.waitForFunction(() => document.getElementById('result')?.dataset.state !== 'idle');
    const state = await page.locator('#result').getAttribute('data-state');
    const verdict = await page.locator('#verdict').textContent();
    await page.evaluate(() => (document.getElementById('result')!.dataset.state = 'idle'));
    return { state, verdict };
  };

  it('says a pasted valid record is valid, and shows its key, status, tier, score and staleness', async () => {
    const record = (await g.verify(GOLD)).text;
    expect(await paste(record)).toEqual({ state: 'valid', verdict: 'Valid signature' });
    const details = await page.locator('#details').textContent();
    expect(details).toContain(JSON.parse(record).key_id);
    expect(details).toMatch(/Statusverified.*Tiergold.*Score93\.5/);
    expect(details).toMatch(/Staleness(current|overdue)/);
  });

  it('names the reason for a tampered record and an unsigned one', async () => {
    const record = JSON.parse((await g.verify(GOLD)).text) as Record<string, unknown>;
    expect(await paste(JSON.stringify({ ...record, score: 99 }))).toEqual({ state: 'invalid', verdict: 'Not verified: BAD_SIGNATURE' });
    const { key_id: _k, signature: _s, ...unsigned } = record;
    expect(await paste(JSON.stringify(unsigned))).toEqual({ state: 'invalid', verdict: 'Not verified: UNSIGNED' });
    expect(await paste('{not json')).toMatchObject({ state: 'error' });
  });

  it('looks a domain up through the gateway with an API key, and verifies the answer; a wrong key is refused', async () => {
    await page.getByLabel('Domain or URL').fill(`https://www.${GOLD}/tents`);
    await page.getByLabel('API key').fill(g.key);
    await page.getByRole('button', { name: 'Look up and verify' }).click();
    await page.waitForFunction(() => document.getElementById('result')?.dataset.state !== 'idle');
    expect(await page.locator('#verdict').textContent()).toBe('Valid signature');
    const shot = join(tmpdir(), 'mvr-verify-page.png');
    await page.screenshot({ path: shot, fullPage: true });
    console.log(`verify page screenshot: ${shot}`);
    await page.evaluate(() => (document.getElementById('result')!.dataset.state = 'idle'));
    await page.getByLabel('API key').fill('mvr_0123456789_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    await page.getByRole('button', { name: 'Look up and verify' }).click();
    await page.waitForFunction(() => document.getElementById('result')?.dataset.state !== 'idle');
    expect(await page.locator('#verdict').textContent()).toBe('Lookup refused: UNAUTHORIZED');
  });

  it('refuses a validly signed record of another domain as the answer to a lookup (DOMAIN_MISMATCH)', async () => {
    const other = (await g.verify('bluebird-books.example')).text;
    expect(JSON.parse(other)).toMatchObject({ domain: 'bluebird-books.example', signature: expect.any(String) });
    // A gateway (or anything between) answering with another shop's record.
    await page.evaluate(() => (document.getElementById('result')!.dataset.state = 'idle'));
    await page.route('**/v1/verify?*', (route) => route.fulfill({ status: 200, contentType: 'application/json', body: other }));
    try {
      await page.getByLabel('Domain or URL').fill(`https://www.${GOLD}/tents`);
      await page.getByLabel('API key').fill(g.key);
      await page.getByRole('button', { name: 'Look up and verify' }).click();
      await page.waitForFunction(() => document.getElementById('result')?.dataset.state !== 'idle');
      expect(await page.locator('#verdict').textContent()).toBe('Not verified: DOMAIN_MISMATCH');
      await page.evaluate(() => (document.getElementById('result')!.dataset.state = 'idle'));
    } finally {
      await page.unroute('**/v1/verify?*');
    }
  });

  const lookUp = async (domain: string) => {
    await page.evaluate(() => (document.getElementById('result')!.dataset.state = 'idle'));
    await page.getByLabel('Domain or URL').fill(domain);
    await page.getByLabel('API key').fill(g.key);
    await page.getByRole('button', { name: 'Look up and verify' }).click();
    await page.waitForFunction(() => document.getElementById('result')?.dataset.state !== 'idle');
    return { state: await page.locator('#result').getAttribute('data-state'), verdict: await page.locator('#verdict').textContent(), details: await page.locator('#details').textContent() };
  };

  it('shows a never-audited domain as such only with its absence proof checked; a made-up "unverified" is not proven', async () => {
    const never = await lookUp('never-audited-page.example');
    expect(never).toMatchObject({ state: 'valid', verdict: 'Never audited: absence proven' });
    expect(never.details).toContain('Build');
    // A proxy answering "unverified" for an audited shop: the gateway has no proof of absence for it.
    const gold = JSON.parse((await g.verify(GOLD)).text) as Record<string, unknown>;
    const { key_id: _k, signature: _s, ...made } = { ...gold, status: 'unverified', score: null, tier: null } as Record<string, unknown>;
    await page.route('**/v1/verify?*', (route) => route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(made) }));
    try {
      expect(await lookUp(GOLD)).toMatchObject({ state: 'invalid', verdict: 'Absence not proven: HAS_RECORD' });
    } finally {
      await page.unroute('**/v1/verify?*');
    }
    // A proof pasted on its own is checked for the domain it names (the last verdict cleared first, so the one awaited is the paste's).
    await page.evaluate(() => (document.getElementById('result')!.dataset.state = 'idle'));
    const proof = (await g.request('/v1/absence?domain=never-audited-page.example')).text;
    expect(await paste(proof)).toEqual({ state: 'valid', verdict: 'Never audited: absence proven' });
    await page.evaluate(() => (document.getElementById('result')!.dataset.state = 'idle'));
  });

  it('works by keyboard, labels every field, and loads nothing from another origin', async () => {
    for (const label of ['Record (JSON)', 'Domain or URL', 'API key']) expect(await page.getByLabel(label).count()).toBe(1);
    await page.getByLabel('Record (JSON)').focus();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Verify the record');
    expect(foreign).toEqual([]);
    const res = await fetch(`${g.url}/verify/app.js`);
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    // The page carries the same policy for a CDN that serves public/verify/ without the header (frame-ancestors only works as a header).
    const header = (await fetch(`${g.url}/verify`)).headers.get('content-security-policy')!;
    const meta = await page.evaluate(() => document.querySelector('meta[http-equiv="Content-Security-Policy"]')?.getAttribute('content'));
    expect(`${meta}; frame-ancestors 'none'`).toBe(header);
  });
});
