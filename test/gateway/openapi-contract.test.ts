/**
 * The served OpenAPI document is what the gateway does. Over real gateways (two kept builds and
 * a log; no build; a corrupt record; a spent quota), every documented operation is asked for its
 * success and each documented error that a request can bring about, and every answer is checked
 * against the document the gateway itself serves: the status is documented for the operation,
 * the documented headers come with their values (the cache policy from its one table), the
 * content type is documented, and the body validates against the documented schema. Every route
 * the app serves must be documented, and every documented status exercised or explained.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createApp, toPlainHandler } from 'h3';
import { afterAll, describe, expect, it } from 'vitest';
import { ohttpKeyFromSeed } from '../../core/ohttp.ts';
import { routes } from '../../gateway/app.ts';
import { CACHE_POLICY, type CachedRoute, PROBLEM_CACHE_POLICY } from '../../gateway/cache-policy.ts';
import { createLogKey, logOrigin } from '../../keyring/log-key.ts';
import { addApiKey, cleanup, type Reply, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { servedDocument } from '../support/openapi-contract.ts';
import { type ContractCase, contractCases, type GatewayName, notProduced } from '../support/openapi-contract-cases.ts';
import { replaceLiveRecord } from '../support/packs.ts';
import { build, copyProject, ISSUER, makeProject, NOW } from '../support/project.ts';

afterAll(cleanup);

const KNOWN = 'acme-outdoor.example';
const CORRUPT = 'lumen-lighting.example';

describe('the served OpenAPI document against the real gateway', async () => {
  const project = await makeProject({ build: false });
  await createLogKey(project.keysDir, logOrigin(ISSUER));
  await build(project, { now: Date.parse('2026-10-20T00:00:00Z') });
  // A second build in which one score moved, so that the change feed has an entry.
  const audits = join(project.auditsDir, 'verified.jsonl');
  const lines = (await readFile(audits, 'utf8')).split('\n');
  await writeFile(audits, lines.map((l) => (l.includes(`"${KNOWN}"`) ? l.replace(/"score":\s*[\d.]+/, '"score": 55') : l)).join('\n'));
  await build(project, { now: NOW });
  const broken = await copyProject(project);
  await replaceLiveRecord(broken, CORRUPT, '{"this is": not json');
  // One clock for the whole run: a never-audited answer is issued at the start of its second, so a
  // GET and its HEAD on either side of a second's edge would otherwise differ in issued_at and ETag.
  const at = Date.now();
  const gateways: Record<GatewayName, TestGateway> = {
    live: await startTestGateway(project, { now: () => at, ohttpKey: await ohttpKeyFromSeed(0, new Uint8Array(32).fill(1)) }),
    empty: await startTestGateway(await makeProject({ build: false })),
    broken: await startTestGateway(broken),
    limited: await startTestGateway(project, { rateLimitPerMinute: 1 }),
  };
  await gateways.limited.verify(KNOWN); // the quota's one request
  const mirrorKeys = {
    live: await addApiKey(gateways.live, 'mirror', ['mirror']),
    empty: await addApiKey(gateways.empty, 'mirror', ['mirror']),
  };
  const live = gateways.live;
  const served = servedDocument((await live.request('/openapi.json', { key: null })).json);
  const { doc } = served;
  const builds = (await live.request('/v1/builds')).json.builds as { id: string }[];
  const size = Number((await live.request('/log/checkpoint', { key: null })).text.split('\n')[1]);
  const cases = contractCases({ known: KNOWN, corrupt: CORRUPT, older: builds[1]!.id, tile: `0/000.p/${size}` });
  // A method each documented path does not take: 405, documented under the path's operation.
  for (const path of Object.keys(doc.paths)) {
    const sample = cases.find((c) => served.pathOf(c.path.split('?')[0]!) === path)!;
    cases.push({ name: `${path} with DELETE`, path: sample.path, method: 'DELETE', status: 405 });
  }
  /** Documented path -> the statuses its answers had. */
  const seen = new Map<string, Set<string>>();

  const send = (c: ContractCase, method: string, headers: Record<string, string> = {}): Promise<Reply> =>
    gateways[c.on ?? 'live'].request(c.path, {
      method,
      key: c.key === false ? null : c.key === 'mirror' ? mirrorKeys[c.on === 'empty' ? 'empty' : 'live'].key : undefined,
      body: c.body,
      headers: { ...c.headers, ...headers },
    });

  /** Checks an answer against the document and the cache-policy table; returns the documented path. */
  function check(c: ContractCase, method: string, reply: Reply): void {
    const path = served.pathOf(c.path.split('?')[0]!);
    expect(path, `${c.path} is not documented`).not.toBeNull();
    const { status } = served.check(path!, method, reply);
    const policy = reply.status >= 400 ? PROBLEM_CACHE_POLICY : CACHE_POLICY[path as CachedRoute];
    expect(reply.headers.get('cache-control'), `${method} ${c.path}: the cache policy table's`).toBe(policy.cacheControl);
    seen.set(path!, (seen.get(path!) ?? new Set()).add(status));
  }

  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const method = c.method ?? 'GET';
    const reply = await send(c, method);
    expect(reply.status, `${method} ${c.path}: ${reply.text.slice(0, 300)}`).toBe(c.status);
    check(c, method, reply);
    if (method === 'GET' && reply.status === 200) {
      // HEAD: the GET's status and headers, no body.
      const head = await send(c, 'HEAD');
      expect(head.status).toBe(200);
      expect(head.bytes.length).toBe(0);
      for (const name of ['content-type', 'cache-control', 'vary', 'etag'])
        expect(head.headers.get(name), `HEAD ${c.path}: ${name}`).toBe(reply.headers.get(name));
      check(c, 'HEAD', head);
    }
    // Where the document promises a 304, asking again with the answer's ETag gets one.
    if (method === 'GET' && reply.status === 200 && doc.paths[served.pathOf(c.path.split('?')[0]!)!].get.responses['304']) {
      const again = await send(c, method, { 'if-none-match': reply.headers.get('etag')! });
      expect(again.status, `${c.path} revalidated`).toBe(304);
      check(c, method, again);
    }
  });

  it('every documented status of every operation was answered by a case above, or says why none can be', () => {
    const missing: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>)) {
      for (const operation of Object.values(operations)) {
        for (const status of Object.keys(operation.responses))
          if (!seen.get(path)?.has(status) && !notProduced(path, status)) missing.push(`${path} ${status}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('documents every route of the app with each of its methods, and nothing the app does not serve', () => {
    const appRoutes = routes(live.gateway.services, toPlainHandler(createApp()));
    const documented = Object.keys(doc.paths);
    const covered = (route: string) =>
      route.endsWith('/**') ? documented.filter((p) => p.startsWith(route.slice(0, -2))) : documented.filter((p) => p === route);
    for (const route of appRoutes) {
      expect(covered(route.path), `the app serves ${route.path}, which the document does not name`).not.toEqual([]);
      // HEAD is answered wherever GET is (the document says so once).
      for (const method of route.methods.filter((m) => m !== 'HEAD')) {
        for (const path of covered(route.path))
          expect(doc.paths[path][method.toLowerCase()], `${method} ${path} is served but not documented`).toBeDefined();
      }
    }
    for (const path of documented) {
      for (const method of Object.keys(doc.paths[path])) {
        expect(
          appRoutes.some((r) => covered(r.path).includes(path) && r.methods.includes(method.toUpperCase() as never)),
          `${method} ${path} is documented but not served`,
        ).toBe(true);
      }
    }
  });

  it('the checks fail on an undocumented status, a wrong header or a body off its schema', async () => {
    const good = await live.verify(KNOWN);
    const reply = (change: Partial<Reply>): Reply => ({ ...good, ...change });
    expect(() => served.check('/v1/verify', 'GET', reply({ status: 418 }))).toThrow(/not documented/);
    const headers = new Headers(good.headers);
    headers.set('cache-control', 'public, max-age=86400');
    expect(() => served.check('/v1/verify', 'GET', reply({ headers }))).toThrow(/Cache-Control/);
    const { score: _score, ...record } = good.json;
    expect(() => served.check('/v1/verify', 'GET', reply({ text: JSON.stringify(record) }))).toThrow(/does not validate/);
    expect(served.pathOf('/v1/undocumented')).toBeNull();
  });
});
