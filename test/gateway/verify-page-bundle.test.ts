/**
 * The verify page in a real headless Chromium takes a pasted bundle (GET /v1/bundle) and verifies
 * it in the browser with the package: a record's bundle is valid, with its place in the map and its
 * statement's entry in the log; a never-audited one is a proven absence; a forged one is refused
 * with its code. The page asks only for the public key set and log key: nothing key-gated.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, type TestGateway } from '../support/gateway.ts';
import { gatewayOver, loggedProject } from '../support/logged-project.ts';
import { needing } from '../support/programs.ts';
import { build, GOLD, UNAUDITED } from '../support/project.ts';
import { CHROMIUM, openPage } from '../support/verify-page.ts';

describe.skipIf(!CHROMIUM.path)(needing(CHROMIUM, 'the verify page in headless Chromium'), () => {
  let g: TestGateway;
  let browser: Browser;
  let page: Page;
  const asked: string[] = [];

  beforeAll(async () => {
    const p = await loggedProject();
    await build(p);
    g = await gatewayOver(p);
    ({ browser, page } = await openPage(`${g.url}/verify`, (p) => p.on('request', (r) => asked.push(new URL(r.url()).pathname))));
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await g?.close();
    await cleanup();
  });

  const bundleOf = async (domain: string) => (await g.request(`/v1/bundle?domain=${domain}`)).json as Record<string, any>;
  const paste = async (bundle: unknown) => {
    await page.evaluate(() => (document.getElementById('result')!.dataset.state = 'idle'));
    await page.getByLabel('Record (JSON)').fill(JSON.stringify(bundle));
    await page.getByRole('button', { name: 'Verify the record' }).click();
    await page.waitForFunction(() => document.getElementById('result')?.dataset.state !== 'idle');
    return {
      state: await page.locator('#result').getAttribute('data-state'),
      verdict: await page.locator('#verdict').textContent(),
      details: await page.locator('#details').textContent(),
    };
  };

  it("verifies a record's bundle, a never-audited one, and refuses a forged one with its code", async () => {
    const gold = await bundleOf(GOLD);
    const valid = await paste(gold);
    expect(valid).toMatchObject({ state: 'valid', verdict: 'Valid signature' });
    expect(valid.details).toMatch(/Placeleaf \d+ of the build's domain map/);
    expect(valid.details).toMatch(/Logbuild statement: entry \d+ of \d+ in merchant-verify\.example\/log/);
    const never = await paste(await bundleOf(UNAUDITED));
    expect(never).toMatchObject({ state: 'absent', verdict: 'Never audited: absence proven' });
    gold.place.index += 1;
    expect(await paste(gold)).toMatchObject({ state: 'invalid', verdict: 'Not verified: RECORD_NOT_IN_MAP' });
    // Only the page, its script and the public key set and log key: nothing key-gated.
    expect(asked.filter((path) => path.startsWith('/v1/'))).toEqual([]);
  });
});
