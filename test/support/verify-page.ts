/**
 * The verify page in a real headless Chromium (Debian's `chromium`, driven by playwright-core,
 * which never downloads a browser of its own): the browser, a page on a gateway's `/verify`, and
 * a lookup through the page's form.
 */
import { type Browser, chromium, type Page } from 'playwright-core';
import { program } from './programs.ts';

export const CHROMIUM = program('chromium', 'chromium', ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome']);

/** A headless Chromium with one page on `url`; `watch` sees the page before it loads (to follow its requests). */
export async function openPage(url: string, watch?: (page: Page) => void): Promise<{ browser: Browser; page: Page }> {
  const browser = await chromium.launch({ executablePath: CHROMIUM.path!, args: ['--no-sandbox'] });
  const page = await browser.newPage();
  watch?.(page);
  await page.goto(url);
  return { browser, page };
}

/** Looks `domain` up through the page's form with `key`; what the page shows once it has answered. */
export async function lookUpOnPage(page: Page, domain: string, key: string) {
  await page.evaluate(() => (document.getElementById('result')!.dataset.state = 'idle'));
  await page.getByLabel('Domain or URL').fill(domain);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Look up and verify' }).click();
  await page.waitForFunction(() => document.getElementById('result')?.dataset.state !== 'idle');
  return {
    state: await page.locator('#result').getAttribute('data-state'),
    verdict: await page.locator('#verdict').textContent(),
    details: await page.locator('#details').textContent(),
  };
}
