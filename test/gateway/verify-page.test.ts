/**
 * The verify page in a real headless Chromium (Debian's `chromium`, driven by playwright-core):
 * a valid record, a tampered one and an unsigned one pasted, and lookups through the gateway (private
 * by default: only a prefix of the domain's hash is sent), each verified in the browser by
 * @merchant-verify/verifier. The page loads nothing from any
 * other origin. A screenshot is kept for a person to look at (its path is printed).
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizeDomain } from '../../core/rules/domain.ts';
import { cleanup, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { needing } from '../support/programs.ts';
import { makeProject } from '../support/project.ts';
import { CHROMIUM, lookUpOnPage, openPage } from '../support/verify-page.ts';

describe.skipIf(!CHROMIUM.path)(needing(CHROMIUM, 'the verify page in headless Chromium'), () => {
  let g: TestGateway;
  let browser: Browser;
  let page: Page;
  const foreign: string[] = [];
  const GOLD = 'acme-outdoor.example';

  beforeAll(async () => {
    g = await startTestGateway(await makeProject());
    ({ browser, page } = await openPage(`${g.url}/verify`, (p) =>
      p.on('request', (r) => {
        if (!r.url().startsWith(g.url)) foreign.push(r.url());
      }),
    ));
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

  it('shows an IDN domain in Unicode beside its A-labels', async () => {
    const idn = normalizeDomain('bücher-haus.example');
    expect(await paste((await g.verify(idn)).text)).toEqual({ state: 'valid', verdict: 'Valid signature' });
    expect(await page.locator('#details').textContent()).toContain(`Domain${idn} (bücher-haus.example)`);
  });

  it('names the reason for a tampered record and an unsigned one', async () => {
    const record = JSON.parse((await g.verify(GOLD)).text) as Record<string, unknown>;
    expect(await paste(JSON.stringify({ ...record, score: 99 }))).toEqual({ state: 'invalid', verdict: 'Not verified: BAD_SIGNATURE' });
    // A forged "verified gold 99.97": the red verdict, and none of its claims shown as facts beside it.
    const forged = { ...record, status: 'verified', tier: 'gold', score: 99.97 };
    await page.getByLabel('Record (JSON)').fill(JSON.stringify(forged));
    await page.getByRole('button', { name: 'Verify the record' }).click();
    await page.waitForFunction(() => document.getElementById('result')?.dataset.state !== 'idle');
    expect(await page.locator('#verdict').textContent()).toBe('Not verified: BAD_SIGNATURE');
    expect(await page.locator('#note').textContent()).toBe('The signature did not verify, so nothing this record says is established.');
    const seen = await page.locator('#result').innerText();
    expect(seen).not.toMatch(/gold|99\.97|Status/);
    const claims = page.getByText('Show what it claims (not verified)');
    expect(await claims.isVisible()).toBe(true);
    expect(await page.locator('#claimed').isVisible()).toBe(false);
    await claims.click();
    expect(await page.locator('#claimed').isVisible()).toBe(true);
    const tier = page.locator('#claimed dt:text-is("Tier") + dd');
    expect(await tier.textContent()).toBe('gold');
    expect(await tier.evaluate((dd) => getComputedStyle(dd).textDecorationLine)).toBe('line-through');
    expect(await tier.evaluate((dd) => getComputedStyle(dd, '::after').content)).toBe('" (unverified)"');
    const shot = join(tmpdir(), 'mvr-verify-page-forged.png');
    await page.screenshot({ path: shot, fullPage: true });
    console.log(`verify page screenshot (forged record): ${shot}`);
    await page.evaluate(() => (document.getElementById('result')!.dataset.state = 'idle'));
    // A valid record after it: the toggle is gone, and its claims are the verdict's table.
    expect(await paste(JSON.stringify(record))).toEqual({ state: 'valid', verdict: 'Valid signature' });
    expect(await page.locator('#claims').isVisible()).toBe(false);
    expect(await page.locator('#details').innerText()).toMatch(/Tier\s+gold/);
    const { key_id: _k, signature: _s, ...unsigned } = record;
    expect(await paste(JSON.stringify(unsigned))).toEqual({ state: 'invalid', verdict: 'Not verified: UNSIGNED' });
    expect(await paste('{not json')).toMatchObject({ state: 'error' });
  });

  it('shows an overdue record as a warning beside its valid signature; a current one without', async () => {
    const text = (await g.verify(GOLD)).text;
    const record = JSON.parse(text) as { issued_at: string; next_audit_at: string };
    // The reader's clock, set in the page: an hour after the build, then 40 days past the next audit.
    const at = async (time: number) => {
      const p = await browser.newPage();
      await p.clock.setFixedTime(time);
      await p.goto(`${g.url}/verify`);
      await p.getByLabel('Record (JSON)').fill(text);
      await p.getByRole('button', { name: 'Verify the record' }).click();
      await p.waitForFunction(() => document.getElementById('result')?.dataset.state !== 'idle');
      const staleness = p.locator('#details dt:text-is("Staleness") + dd');
      return {
        p,
        verdict: await p.locator('#verdict').textContent(),
        staleness: await staleness.textContent(),
        warns: await staleness.evaluate(
          (dd) => dd.classList.contains('warn') && [getComputedStyle(dd).color, getComputedStyle(dd, '::before').content],
        ),
        note: (await p.locator('#note').isVisible()) ? await p.locator('#note').textContent() : null,
      };
    };
    const current = await at(Date.parse(record.issued_at) + 3_600_000);
    expect(current).toMatchObject({
      verdict: 'Valid signature',
      staleness: expect.stringMatching(/^current, \d+ days$/),
      warns: false,
      note: null,
    });
    await current.p.close();
    const late = await at(Date.parse(record.next_audit_at) + 40 * 86_400_000);
    expect(late).toMatchObject({
      verdict: 'Valid signature',
      staleness: expect.stringMatching(/^overdue, \d+ days$/),
      warns: ['rgb(138, 70, 0)', '"\u26a0 "'],
    });
    expect(late.note).toBe('Warning: the monthly re-audit is overdue; this record may no longer describe the shop.');
    const shot = join(tmpdir(), 'mvr-verify-page-overdue.png');
    await late.p.screenshot({ path: shot, fullPage: true });
    console.log(`verify page screenshot (overdue): ${shot}`);
    await late.p.close();
  });

  it('looks a domain up through the gateway with an API key, and verifies the answer; a wrong key is refused', async () => {
    await page.getByLabel('Domain or URL').fill(`https://www.${GOLD}/tents`);
    await page.getByLabel('API key').fill(g.key);
    await page.getByRole('button', { name: 'Look up and verify' }).click();
    await page.waitForFunction(() => document.getElementById('result')?.dataset.state !== 'idle');
    // Private by default: the verdict comes from the domain's map entry in a compact answer, the record one step away.
    expect(await page.locator('#verdict').textContent()).toBe('Verified from its map entry');
    const shot = join(tmpdir(), 'mvr-verify-page.png');
    await page.screenshot({ path: shot, fullPage: true });
    console.log(`verify page screenshot: ${shot}`);
    await page.evaluate(() => (document.getElementById('result')!.dataset.state = 'idle'));
    await page.getByLabel('API key').fill('mvr_0123456789_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    await page.getByRole('button', { name: 'Look up and verify' }).click();
    await page.waitForFunction(() => document.getElementById('result')?.dataset.state !== 'idle');
    expect(await page.locator('#verdict').textContent()).toBe('Lookup refused: UNAUTHORIZED');
  });

  const lookUp = (domain: string) => lookUpOnPage(page, domain, g.key);

  it('shows a never-audited domain as such only with its absence proof checked; a made-up "unverified" is not proven', async () => {
    const never = await lookUp('never-audited-page.example');
    expect(never).toMatchObject({ state: 'absent', verdict: 'Never audited: absence proven' });
    expect(never.details).toContain('Build');
    // Its own look, not a valid signature's green; the note names the build and its date.
    const green = await page.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue('--ok').trim());
    const colours = await page
      .locator('#result')
      .evaluate((el) => [
        getComputedStyle(el).borderTopColor,
        getComputedStyle(el).borderTopStyle,
        getComputedStyle(el.querySelector('#verdict')!).color,
      ]);
    expect(green).toBe('#0b6b2e');
    expect(colours).not.toContain('rgb(11, 107, 46)');
    expect(colours[1]).toBe('dashed');
    const statement = JSON.parse((await g.request('/v1/absence?domain=never-audited-page.example')).text) as {
      statement: { build: string; issued_at: string };
    };
    expect(await page.locator('#note').innerText()).toBe(
      `never-audited-page.example has no record in build ${statement.statement.build}, issued ${statement.statement.issued_at}: it was never audited. This is not a verification of the shop.`,
    );
    const shot = join(tmpdir(), 'mvr-verify-page-absent.png');
    await page.screenshot({ path: shot, fullPage: true });
    console.log(`verify page screenshot (never audited): ${shot}`);
    // A proxy answering "unverified" for an audited shop: the gateway has no proof of absence for it.
    const gold = JSON.parse((await g.verify(GOLD)).text) as Record<string, unknown>;
    const { key_id: _k, signature: _s, ...made } = { ...gold, status: 'unverified', score: null, tier: null } as Record<string, unknown>;
    await page.route('**/v1/verify?*', (route) =>
      route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(made) }),
    );
    await page.getByLabel('Private lookup').uncheck();
    try {
      expect(await lookUp(GOLD)).toMatchObject({ state: 'invalid', verdict: 'Absence not proven: NOT_ABSENT' });
    } finally {
      await page.unroute('**/v1/verify?*');
      await page.getByLabel('Private lookup').check();
    }
    // A proof pasted on its own is checked for the domain it names (the last verdict cleared first, so the one awaited is the paste's).
    await page.evaluate(() => (document.getElementById('result')!.dataset.state = 'idle'));
    const proof = (await g.request('/v1/absence?domain=never-audited-page.example')).text;
    expect(await paste(proof)).toEqual({ state: 'absent', verdict: 'Never audited: absence proven' });
    await page.evaluate(() => (document.getElementById('result')!.dataset.state = 'idle'));
  });

  it('normalizes the domain typed by the service’s own rule, and refuses one that is no domain before any request', async () => {
    expect(await lookUp(`https://WWW.Acme-Outdoor.example./tents?x=1`)).toMatchObject({
      state: 'valid',
      verdict: 'Verified from its map entry',
    });
    const sent: string[] = [];
    const onRequest = (r: { url(): string }) => sent.push(r.url());
    page.on('request', onRequest);
    for (const domain of ['co.uk', 'localhost'])
      expect(await lookUp(domain), domain).toMatchObject({ state: 'error', verdict: 'Not looked up: INVALID_DOMAIN' });
    page.off('request', onRequest);
    expect(sent).toEqual([]);
  });

  it("takes the maximum age in the CLI's syntax (36h, 2d): a bare number is refused, naming the form", async () => {
    const problemWith = async (maxAge: string) => {
      await page.getByLabel('Maximum age (optional)').fill(maxAge);
      try {
        const r = await lookUpOnPage(page, GOLD, g.key);
        expect(r.state, maxAge).toBe('error');
        return r.details;
      } finally {
        await page.getByLabel('Maximum age (optional)').fill('');
      }
    };
    expect(await problemWith('36')).toContain('the maximum age "36" must be a duration such as 36h, 90m or 2d');
    // Parsed: what stops it now is the missing policy, as with mvr verify --max-age alone.
    for (const maxAge of ['36h', '2d']) expect(await problemWith(maxAge)).toContain('a maximum age applies to the cosignatures');
  });

  it('works by keyboard, labels every field, and loads nothing from another origin', async () => {
    for (const label of [
      'Record (JSON)',
      'Domain or URL',
      'API key',
      'Private lookup',
      'Witness policy (optional)',
      'Maximum age (optional)',
    ])
      expect(await page.getByLabel(label).count(), label).toBe(1);
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
