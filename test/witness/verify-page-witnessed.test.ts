/**
 * The verify page with a witness policy, in a real headless Chromium: a logged build whose
 * checkpoint real witnesses cosigned, a real gateway; the reader pastes their own policy beside
 * the lookup, and the page checks the record's log proof under it in the browser; a pasted bundle is
 * held to the same policy and maximum age.
 */

import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BuildWitness, buildPolicy, cosignBuild, startBuildWitnesses } from '../support/cosign-build.ts';
import { cleanup, type TestGateway } from '../support/gateway.ts';
import { gatewayOver, loggedProject, NOV } from '../support/logged-project.ts';
import { needing } from '../support/programs.ts';
import { build, GOLD, removeTempDirs } from '../support/project.ts';
import { CHROMIUM, openPage } from '../support/verify-page.ts';

const COSIGNED = Math.floor((Date.now() - 3_600_000) / 1000) * 1000;
const QUORUM = 'group two 2 pay shop glass\nquorum two';

describe.skipIf(!CHROMIUM.path)(needing(CHROMIUM, 'the verify page in headless Chromium'), () => {
  let g: TestGateway;
  let browser: Browser;
  let page: Page;
  let witnesses: BuildWitness[];
  const policies: Record<'ours' | 'others', string> = { ours: '', others: '' };

  beforeAll(async () => {
    const p = await loggedProject();
    await build(p, { now: NOV });
    witnesses = await startBuildWitnesses(p, ['pay', 'shop', 'glass'], COSIGNED);
    policies.ours = await buildPolicy(p, witnesses, QUORUM);
    await cosignBuild(p, policies.ours);
    const others = await startBuildWitnesses(p, ['pay', 'shop', 'glass'], COSIGNED);
    policies.others = await buildPolicy(p, others, QUORUM);
    for (const w of others) await w.close();
    g = await gatewayOver(p);
    ({ browser, page } = await openPage(`${g.url}/verify`));
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    for (const w of witnesses ?? []) await w.close();
    await cleanup();
    await removeTempDirs();
  });

  /** The reader's policy and maximum age filled in, then `button` pressed: the verdict the page shows. */
  const submit = async (button: string, policy: string, maxAge: string) => {
    await page.getByLabel('Witness policy (optional)').fill(policy);
    await page.getByLabel('Maximum age (optional)').fill(maxAge);
    await page.evaluate(() => (document.getElementById('result')!.dataset.state = 'idle'));
    await page.getByRole('button', { name: button }).click();
    await page.waitForFunction(() => document.getElementById('result')?.dataset.state !== 'idle');
    return { state: await page.locator('#result').getAttribute('data-state'), verdict: await page.locator('#verdict').textContent() };
  };

  const lookUp = async (policy: string, maxAge = '') => {
    await page.getByLabel('Domain or URL').fill(GOLD);
    await page.getByLabel('API key').fill(g.key);
    return submit('Look up and verify', policy, maxAge);
  };

  it('with the reader’s policy: valid, and when the record’s log proof was last witnessed, by whom', async () => {
    // A private lookup: the verdict is the domain's map entry, under the build statement the policy checks.
    expect(await lookUp(policies.ours)).toEqual({ state: 'valid', verdict: 'Verified from its map entry' });
    // Each step has its row: the statement's signature, the log entry the policy implies (a private lookup's, the
    // build statement's: its record's own proof would name the domain), the witnesses.
    expect(await page.locator('dt:text-is("Build") + dd').textContent()).toMatch(/, statement signed by /);
    expect(await page.locator('dt:text-is("Log") + dd').textContent()).toMatch(
      /^build statement: entry \d+ of \d+ in merchant-verify\.example\/log$/,
    );
    expect(await page.locator('dt:text-is("Last witnessed") + dd').textContent()).toMatch(
      new RegExp(`^${new Date(COSIGNED).toISOString()} by (pay|shop|glass), `),
    );
  });

  it('with a policy of other witness keys: not proven, NOT_WITNESSED; without a policy, as before', async () => {
    expect(await lookUp(policies.others)).toEqual({ state: 'invalid', verdict: 'Not verified: NOT_WITNESSED' });
    expect(await lookUp('')).toEqual({ state: 'valid', verdict: 'Verified from its map entry' });
    expect(await page.locator('dt:text-is("Last witnessed")').count()).toBe(0);
  });

  it('with a maximum age: valid when the quorum cosigned within it, NOT_WITNESSED when the cosignatures are older', async () => {
    // The witnesses cosigned an hour before the test began.
    expect(await lookUp(policies.ours, '36h')).toEqual({ state: 'valid', verdict: 'Verified from its map entry' });
    expect(await page.locator('dt:text-is("Last witnessed") + dd').textContent()).toMatch(
      new RegExp(`^${new Date(COSIGNED).toISOString()} `),
    );
    expect(await lookUp(policies.ours, '30m')).toEqual({ state: 'invalid', verdict: 'Not verified: NOT_WITNESSED' });
  });

  it('a pasted bundle under the same policy and maximum age: valid within it, NOT_WITNESSED past it or under other witnesses', async () => {
    const bundle = (await g.request(`/v1/bundle?domain=${GOLD}`)).text;
    const paste = async (policy: string, maxAge = '') => {
      await page.getByLabel('Record (JSON)').fill(bundle);
      return submit('Verify the record', policy, maxAge);
    };
    expect(await paste(policies.ours, '36h')).toEqual({ state: 'valid', verdict: 'Valid signature' });
    expect(await paste(policies.ours, '30m')).toEqual({ state: 'invalid', verdict: 'Not verified: NOT_WITNESSED' });
    expect(await paste(policies.others)).toEqual({ state: 'invalid', verdict: 'Not verified: NOT_WITNESSED' });
    expect(await paste('', '36h')).toEqual({ state: 'error', verdict: 'Not verified: INVALID_USAGE' });
    expect(await paste('')).toEqual({ state: 'valid', verdict: 'Valid signature' });
  });

  it("takes a maximum age only in the CLI's duration syntax (36h, 2d), and only with a policy", async () => {
    expect(await lookUp('', '36h')).toEqual({ state: 'error', verdict: 'Not looked up: INVALID_USAGE' });
    expect(await page.locator('#details').textContent()).toMatch(/give a policy too/);
    for (const bad of ['36', 'abc', '-1h', '0h', '1.5h', 'Infinity']) {
      expect(await lookUp(policies.ours, bad), bad).toEqual({ state: 'error', verdict: 'Not looked up: INVALID_USAGE' });
      expect(await page.locator('#details').textContent()).toMatch(/must be a duration such as 36h, 90m or 2d/);
    }
  });
});
