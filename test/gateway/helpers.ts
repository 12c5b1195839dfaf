/**
 * Shared set-up for the gateway tests: a temp project (copied sample audits, a signing key,
 * a real `runBuild` with a fixed `--now`, an API key), a real gateway on a random loopback port
 * with its log lines collected, plain HTTP helpers, a bounded poll, and clean-up.
 * Nothing is mocked: records are real files, signatures are real, requests go over TCP.
 */
import { cp, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { runBuild, type BuildOptions, type BuildSummary } from '../../builder/build.ts';
import { keygen, loadActiveKey } from '../../service/signing-keys.ts';
import { createApiKey } from '../../service/api-keys.ts';
import { startGateway, type GatewayOptions, type RunningGateway } from '../../gateway/server.ts';
import type { LogLine } from '../../gateway/context.ts';
import { KEY_SET_PATH, parseKeySet, type KeySet } from '../../core/keyset.ts';
import { CURRENT_LINK, recordPath } from '../../core/layout.ts';
import type { SigningKey } from '../../core/signing.ts';
import { buildOptions, ISSUER, NOW, ROOT, SAMPLE_AUDITS, SCHEMA_URL } from '../build/helpers.ts';

// One set of project constants for every suite: the build helpers'.
export { ISSUER, NOW, NOW_ISO, ROOT, SAMPLE_AUDITS, SCHEMA_URL } from '../build/helpers.ts';
export const RECORD_CACHE_CONTROL = 'public, max-age=60, s-maxage=300';
export const REFRESH_MS = 100;

// ---------------------------------------------------------------------------------------------
// Temp projects

export interface TestProject {
  root: string;
  auditsDir: string;
  recordsDir: string;
  publicDir: string;
  keysDir: string;
  apiKeysFile: string;
  keySetFile: string;
  /** The kid made at set-up (null when unsigned). */
  kid: string | null;
}

const tempDirs: string[] = [];
const gateways = new Set<TestGateway>();

/**
 * A temp project: a copy of the sample audits (so tests may edit them), a signing key unless
 * `sign: false`, and one build of the samples with `--now` fixed, unless `build: false`.
 */
export async function makeProject(opts: { sign?: boolean; build?: boolean } = {}): Promise<TestProject> {
  const root = await mkdtemp(join(tmpdir(), 'mvr-gateway-test-'));
  tempDirs.push(root);
  const p: TestProject = {
    root,
    auditsDir: join(root, 'audits'),
    recordsDir: join(root, 'records'),
    publicDir: join(root, 'public'),
    keysDir: join(root, 'keys'),
    apiKeysFile: join(root, 'keys', 'api-keys.json'),
    keySetFile: join(root, 'public', KEY_SET_PATH),
    kid: null,
  };
  await cp(SAMPLE_AUDITS, p.auditsDir, { recursive: true });
  await mkdir(p.keysDir, { recursive: true });
  if (opts.sign !== false) p.kid = await keygen(p.keysDir);
  if (opts.build !== false) await build(p);
  return p;
}

/** The real build of the project's audits: the build tests' options (fixed issuer and `--now`, one worker). */
export function build(p: TestProject, overrides: Partial<BuildOptions> = {}): Promise<BuildSummary> {
  return runBuild(buildOptions(p, overrides));
}

/** The live record file of a (normalized) domain: `records/current/<ab>/<domain>.json`. */
export function liveRecordFile(p: TestProject, domain: string): string {
  return join(p.recordsDir, CURRENT_LINK, recordPath(domain));
}

/** Every record file of the live build, by domain: exactly the bytes the gateway must serve. */
export async function liveRecords(p: TestProject): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const base = join(p.recordsDir, CURRENT_LINK);
  // Every shard folder, at any depth: the test does not depend on how deep the layout is.
  const walk = async (dir: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      if (e.isDirectory()) await walk(join(dir, e.name));
      else if (dir !== base && e.name.endsWith('.json')) out.set(e.name.slice(0, -'.json'.length), await readFile(join(dir, e.name)));
    }
  };
  await walk(base);
  return out;
}

/** The published key set file: its bytes and parsed form. */
export async function publishedKeySet(p: TestProject): Promise<{ bytes: Buffer; keySet: KeySet }> {
  const bytes = await readFile(p.keySetFile);
  return { bytes, keySet: parseKeySet(JSON.parse(bytes.toString('utf8'))) };
}

/** The active signing key of the project (for `unverifiedSigner`). */
export async function activeSigner(p: TestProject): Promise<SigningKey> {
  const key = await loadActiveKey(p.keysDir, undefined);
  if (!key) throw new Error('project has no active signing key');
  return key;
}

// ---------------------------------------------------------------------------------------------
// Gateways

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
  project: TestProject;
  gateway: RunningGateway;
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

/** Starts the real gateway on 127.0.0.1, a random port, with a fresh API key and small refresh interval. */
export async function startTestGateway(
  project: TestProject,
  overrides: Partial<GatewayOptions> = {},
): Promise<TestGateway> {
  const { key, entry } = await createApiKey(project.apiKeysFile, 'gateway-test');
  const logs: LogLine[] = [];
  const gateway = await startGateway({
    recordsDir: project.recordsDir,
    publicDir: project.publicDir,
    apiKeysFile: project.apiKeysFile,
    issuer: ISSUER,
    schemaUrl: SCHEMA_URL,
    host: '127.0.0.1',
    port: 0,
    cacheBytes: 1024 * 1024,
    refreshMs: REFRESH_MS,
    log: (line) => logs.push(line),
    ...overrides,
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
 * would normalize); `Connection: close` is added, the answer is read to the end.
 */
export function rawRequest(t: TestGateway, requestLine: string, headers: Record<string, string> = {}): Promise<{ status: number; head: string; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const lines = [requestLine, 'Host: 127.0.0.1', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), 'Connection: close', '', ''];
    const auth = headers.Authorization ?? headers.authorization;
    if (auth !== undefined) t.sentAuthorizations.add(auth);
    const socket = connect(t.gateway.port, '127.0.0.1', () => socket.write(lines.join('\r\n')));
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', reject);
    socket.setTimeout(5000, () => socket.destroy(new Error('raw request timed out')));
    socket.on('end', () => {
      const all = Buffer.concat(chunks);
      const split = all.indexOf('\r\n\r\n');
      const head = all.subarray(0, split).toString('latin1');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), head, body: all.subarray(split + 4) });
    });
  });
}

/** Creates another API key in the gateway's key file (remembered as a secret for the log check). */
export async function addApiKey(t: TestGateway, label = 'extra'): Promise<{ key: string; id: string }> {
  const { key, entry } = await createApiKey(t.project.apiKeysFile, label);
  t.secrets.add(key);
  return { key, id: entry.id };
}

/** Closes every gateway still running and removes every temp project (use in afterAll). */
export async function cleanup(): Promise<void> {
  await Promise.all([...gateways].map((g) => g.close()));
  await Promise.all(tempDirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
}

// ---------------------------------------------------------------------------------------------
// Assertions

/** An RFC 9457 problem: status, code, the five members exactly, problem+json, never cached. */
export function expectProblem(r: Reply, status: number, code: string): { type: string; title: string; status: number; detail: string; code: string } {
  expect({ status: r.status, code: r.json?.code }).toEqual({ status, code });
  expect(r.headers.get('content-type')).toBe('application/problem+json');
  expect(r.headers.get('cache-control')).toBe('no-store');
  expect(Object.keys(r.json).sort()).toEqual(['code', 'detail', 'status', 'title', 'type']);
  expect(r.json.status).toBe(status);
  expect(typeof r.json.type).toBe('string');
  expect(typeof r.json.title).toBe('string');
  expect(typeof r.json.detail).toBe('string');
  expect(r.json.detail.length).toBeGreaterThan(0);
  return r.json;
}

/**
 * No log line carries an API key, a secret part of one, or an Authorization header value that
 * was sent (including wrong keys).
 */
export function expectNoSecretsInLogs(t: TestGateway): void {
  const needles = new Set<string>();
  for (const key of t.secrets) {
    needles.add(key);
    const secret = key.split('_').slice(2).join('_');
    if (secret.length >= 16) needles.add(secret);
  }
  for (const value of t.sentAuthorizations) {
    needles.add(value);
    const token = value.replace(/^\S+\s+/, '').trim();
    if (token.length >= 16) needles.add(token);
  }
  expect(t.logs.length).toBeGreaterThan(0);
  for (const line of t.logs) {
    const text = JSON.stringify(line);
    for (const needle of needles) {
      if (text.includes(needle)) throw new Error(`log line leaks a credential: ${text}`);
    }
    expect(text.toLowerCase()).not.toContain('authorization');
  }
}

// ---------------------------------------------------------------------------------------------
// Time

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Calls `fn` until `done(value)` holds, every `intervalMs`, for at most `timeoutMs`; returns the
 * value and how long it took. Throws with the last value on time-out.
 */
export async function poll<T>(
  fn: () => Promise<T>,
  done: (value: T) => boolean,
  { timeoutMs = 5000, intervalMs = 20 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<{ value: T; elapsedMs: number }> {
  const started = performance.now();
  for (;;) {
    const value = await fn();
    const elapsedMs = performance.now() - started;
    if (done(value)) return { value, elapsedMs };
    if (elapsedMs > timeoutMs) {
      const shown = (value as Reply | undefined)?.status !== undefined ? `${(value as Reply).status} ${(value as Reply).text.slice(0, 300)}` : JSON.stringify(value);
      throw new Error(`condition not met within ${timeoutMs} ms; last value: ${shown}`);
    }
    await sleep(intervalMs);
  }
}

/** Waits (bounded) until the gateway has written a log line matching `match`; returns it. */
export async function waitForLog(t: TestGateway, match: (line: LogLine) => boolean, timeoutMs = 2000): Promise<LogLine> {
  const { value } = await poll(async () => t.logs.find(match), (line) => line !== undefined, { timeoutMs, intervalMs: 5 });
  return value!;
}

/**
 * One gateway over one fresh project for a test file or a describe block: made before its tests
 * and handed to `take`; after them, its log lines are checked for secrets. (The file's
 * `afterAll(cleanup)` closes it and removes the project.)
 */
export function useGateway(take: (t: { project: TestProject; g: TestGateway }) => unknown, overrides: Partial<GatewayOptions> = {}): void {
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
