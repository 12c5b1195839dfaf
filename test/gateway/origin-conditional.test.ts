/**
 * The manifest an http(s) origin serves is polled conditionally: with the ETag the origin gave,
 * an unchanged build costs a 304 and no body, and the gateway keeps serving it; a changed manifest
 * is read whole again.
 */
import { readFile, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CURRENT_LINK } from '../../core/layout.ts';
import { cleanup, startTestGateway, type TestGateway, trustingProject } from '../support/gateway.ts';
import { makeProject } from '../support/project.ts';
import { type StaticOrigin, startStaticOrigin } from '../support/static-origin.ts';
import { waitFor } from '../support/wait.ts';

const MANIFEST = '/manifest.json';
let origin: StaticOrigin;
let g: TestGateway;
let buildDir: string;

beforeAll(async () => {
  const project = await makeProject();
  buildDir = await realpath(join(project.recordsDir, CURRENT_LINK));
  origin = await startStaticOrigin(buildDir, { etags: true });
  g = await startTestGateway(project, { records: { url: origin.url }, trust: await trustingProject(project) });
});
afterAll(async () => {
  await cleanup();
  await origin.stop();
});

const manifestReads = () => origin.requests.filter((p) => p === MANIFEST).length - origin.notModified.filter((p) => p === MANIFEST).length;

describe('polling an origin that gives ETags', () => {
  it('an unchanged manifest is answered 304 at every refresh, read whole only once, and the build stays served', async () => {
    await waitFor(() => origin.notModified.filter((p) => p === MANIFEST).length >= 3, 'three refreshes answered 304');
    expect(manifestReads()).toBe(1);
    expect((await g.verify('quiet-pottery.example')).status).toBe(200);
    expect((await g.request('/healthz')).json.status).toBe('ok');
  });

  it('a changed manifest is read whole again (its ETag no longer matches)', async () => {
    const reads = manifestReads();
    // The same manifest with a trailing newline: other bytes, another ETag, the same build.
    await writeFile(join(buildDir, 'manifest.json'), `${await readFile(join(buildDir, 'manifest.json'), 'utf8')}\n`);
    await waitFor(() => manifestReads() > reads, 'the changed manifest read');
  });
});
