/**
 * The real gateway for tests: started in-process on 127.0.0.1 and a random port over a temp
 * project (./project.ts), with a fresh API key, a short refresh interval and its log lines
 * collected; plain HTTP helpers (and a request written byte for byte, over ./raw-http.ts); and one `cleanup()` for a test file's gateways and
 * temp folders.
 */
import { readFile } from 'node:fs/promises';
import { parseKeySet } from '@merchant-verify/verifier';
import { afterAll, beforeAll } from 'vitest';
import { type ApiKeyScope, createApiKey } from '../../access/api-keys.ts';
import type { TrustSettings } from '../../core/rules/key-trust.ts';
import type { LogLine } from '../../gateway/context.ts';
import { type GatewayOptions, type RunningGateway, startGateway } from '../../gateway/server.ts';
import type { StoreSettings } from '../../storage/open.ts';
import { expectNoSecretsInLogs } from './gateway-expect.ts';
import { ISSUER, makeProject, type Project, removeTempDirs, SCHEMA_URL } from './project.ts';
import { exchange, wire } from './raw-http.ts';
import { poll } from './wait.ts';

/** How long a raw request may go unanswered before it fails. */
const RAW_REPLY_LIMIT_MS = 5_000;

export const RECORD_CACHE_CONTROL = 'public, max-age=60, s-maxage=300';
export const REFRESH_MS = 100;

export interface Reply {
  status: number;
  headers: Headers;
  bytes: Buffer;
  text: string;
  /** Parsed JSON body, or undefined when the body is empty or not JSON. */
  json: any;
}

export interface RequestOptions {
  method?: string;
  /** API key sent as `Bearer <key>`; the gateway's own key by default, null for none. */
  key?: string | null;
  /** Raw Authorization header (overrides `key`). */
  authorization?: string;
  headers?: Record<string, string>;
  /** A request body (for POST). */
  body?: string;
}

export interface TestGateway {
  project: Project;
  gateway: RunningGateway;
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Every log line the gateway wrote. */
  logs: LogLine[];
  /** A live API key and its id. */
  key: string;
  keyId: string;
  /** Every Authorization header value sent through {@link TestGateway.request} (checked against the logs). */
  sentAuthorizations: Set<string>;
  /** Every API key created for this gateway (checked against the logs). */
  secrets: Set<string>;
  request(path: string, opts?: RequestOptions): Promise<Reply>;
  /** `GET /v1/verify?domain=<encoded domain>` with the gateway's key. */
  verify(domain: string, opts?: RequestOptions): Promise<Reply>;
  close(): Promise<void>;
}

const gateways = new Set<TestGateway>();

/** A test's own gateway options; `records` overrides the project's records folder and public folder member by member. */
export type GatewayOverrides = Partial<Omit<GatewayOptions, 'records'>> & { records?: Partial<StoreSettings> };

/**
 * `p`'s published key set pinned, as `--trusted-keys public/.well-known/merchant-verify-keys.json`
 * does: what a gateway on a bucket or an origin must be started with.
 */
export async function trustingProject(p: Pick<Project, 'keySetFile'>): Promise<TrustSettings> {
  return { trustedKeys: parseKeySet(JSON.parse(await readFile(p.keySetFile, 'utf8'))) };
}

/** Starts the real gateway on 127.0.0.1, a random port, with a fresh API key and a short refresh interval. */
export async function startTestGateway(project: Project, overrides: GatewayOverrides = {}): Promise<TestGateway> {
  const { key, entry } = await createApiKey(project.apiKeysFile, 'gateway-test');
  const logs: LogLine[] = [];
  const gateway = await startGateway({
    apiKeysFile: project.apiKeysFile,
    issuer: ISSUER,
    schemaUrl: SCHEMA_URL,
    host: '127.0.0.1',
    port: 0,
    cacheBytes: 1024 * 1024,
    refreshMs: REFRESH_MS,
    log: (line) => logs.push(line),
    ...overrides,
    records: { url: project.recordsDir, publicDir: project.publicDir, ...overrides.records },
  });
  let closed = false;
  const t: TestGateway = {
    project,
    gateway,
    url: gateway.url,
    logs,
    key,
    keyId: entry.id,
    sentAuthorizations: new Set(),
    secrets: new Set([key]),
    request: (path, opts = {}) => send(t, path, opts),
    verify: (domain, opts = {}) => send(t, `/v1/verify?domain=${encodeURIComponent(domain)}`, opts),
    async close() {
      if (closed) return;
      closed = true;
      gateways.delete(t);
      await gateway.close();
    },
  };
  gateways.add(t);
  return t;
}

async function send(t: TestGateway, path: string, opts: RequestOptions): Promise<Reply> {
  const headers: Record<string, string> = { ...opts.headers };
  const key = opts.key === undefined ? t.key : opts.key;
  const authorization = opts.authorization ?? (key === null ? undefined : `Bearer ${key}`);
  if (authorization !== undefined) {
    headers.authorization = authorization;
    t.sentAuthorizations.add(authorization);
  }
  const res = await fetch(t.url + path, { method: opts.method ?? 'GET', headers, body: opts.body });
  const bytes = Buffer.from(await res.arrayBuffer());
  const text = bytes.toString('utf8');
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, bytes, text, json };
}

/**
 * One HTTP/1.1 request written by hand on a fresh TCP connection (for request targets that fetch
 * would normalize), through the raw client (./raw-http.ts); `Connection: close` is added, the
 * answer is read to the end.
 */
export async function rawRequest(
  t: TestGateway,
  requestLine: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; head: string; body: Buffer }> {
  const auth = headers.Authorization ?? headers.authorization;
  if (auth !== undefined) t.sentAuthorizations.add(auth);
  const lines = ['Host: 127.0.0.1', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), 'Connection: close'];
  // A bound on a gateway that never answers (a failure), never a wait: answers come in milliseconds.
  const x = await exchange(t.gateway.port, wire(requestLine, lines), { timeoutMs: RAW_REPLY_LIMIT_MS });
  const r = x.responses[0];
  if (x.timedOut || !r)
    throw new Error(`raw request ${x.timedOut ? 'timed out' : 'got no response'}: ${x.rest.toString('latin1').slice(0, 200)}`);
  return { status: r.status, head: r.head, body: r.body };
}

/** Creates another API key in the gateway's key file, with `scopes` (remembered as a secret for the log check). */
export async function addApiKey(t: TestGateway, label = 'extra', scopes: ApiKeyScope[] = []): Promise<{ key: string; id: string }> {
  const { key, entry } = await createApiKey(t.project.apiKeysFile, label, { scopes });
  t.secrets.add(key);
  return { key, id: entry.id };
}

/** Waits (bounded) until the gateway has written a log line matching `match`; returns it. */
export async function waitForLog(t: TestGateway, match: (line: LogLine) => boolean, timeoutMs = 20_000): Promise<LogLine> {
  const { value } = await poll(
    async () => t.logs.find(match),
    (line) => line !== undefined,
    { timeoutMs, intervalMs: 5 },
  );
  return value!;
}

/** The gateway's request log lines for one path: their method and status, in order. */
export function requestsTo(t: TestGateway, path: string): { method: unknown; status: unknown }[] {
  return t.logs.filter((l) => l.msg === 'request' && l.path === path).map((l) => ({ method: l.method, status: l.status }));
}

/** Closes every gateway still running and removes every temp folder and project (use in afterAll). */
export async function cleanup(): Promise<void> {
  await Promise.all([...gateways].map((g) => g.close()));
  await removeTempDirs();
}

/**
 * One gateway over one fresh project for a test file or a describe block: made before its tests
 * and handed to `take`; after them, its log lines are checked for secrets. (The file's
 * `afterAll(cleanup)` closes it and removes the project.)
 */
export function useGateway(take: (t: { project: Project; g: TestGateway }) => unknown, overrides: Partial<GatewayOptions> = {}): void {
  let g: TestGateway | undefined;
  beforeAll(async () => {
    const project = await makeProject();
    g = await startTestGateway(project, overrides);
    await take({ project, g });
  });
  afterAll(() => {
    if (g) expectNoSecretsInLogs(g);
  });
}
