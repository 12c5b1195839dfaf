/**
 * Shared set-up for the verifier and MCP tests: a temp project (a copy of the sample audits, a
 * signing key made by the real `keygen`, a real `runBuild` with a fixed `--now`), a real gateway
 * on a random loopback port with a fresh API key, the CLI as a child process, and clean-up.
 * Nothing of the project is mocked: records are real files, signatures are real, requests go over TCP.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { GatewayOptions, RunningGateway } from '../../gateway/server.ts';
import type { LogLine } from '../../gateway/context.ts';
import { parseKeySet, type KeySet } from '../../core/keyset.ts';
import { CURRENT_LINK, MANIFEST_FILE } from '../../core/layout.ts';
import { ROOT } from '../build/helpers.ts';
import { build, cleanup as cleanupProjects, liveRecordFile, makeProject, startTestGateway as startGatewayForTest, type TestProject } from '../gateway/helpers.ts';

// The project constants of every suite (ROOT is where the CLI runs; NOW_ISO is every test build's issued_at).
export { ISSUER, NOW, NOW_ISO, ROOT, SCHEMA_URL } from '../build/helpers.ts';
export const BIN = join(ROOT, 'bin', 'mvr.js');
/** A sample domain with a gold, verified record (last audited 2026-10-15T12:00Z). */
export const GOLD = 'acme-outdoor.example';
/** A valid domain that no sample audits. */
export const UNAUDITED = 'never-audited-shop.example';

// ---------------------------------------------------------------------------------------------
// Temp projects

/** The same temp projects as the gateway tests: one implementation of the set-up. */
export type Project = TestProject;
export { makeProject, build, liveRecordFile };

const tempDirs: string[] = [];

/** A fresh folder under the OS temp folder, removed by {@link cleanup}. */
export async function tempDir(prefix = 'mvr-verifier-test-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

export interface StoredRecord {
  bytes: Buffer;
  text: string;
  record: Record<string, unknown>;
}

/** One live record: its exact bytes and parsed form. */
export async function liveRecord(p: Project, domain: string): Promise<StoredRecord> {
  const bytes = await readFile(liveRecordFile(p, domain));
  const text = bytes.toString('utf8');
  return { bytes, text, record: JSON.parse(text) as Record<string, unknown> };
}

/** Every record of the live build (not the manifest), by the file's domain. */
export async function liveRecords(p: Project): Promise<Map<string, StoredRecord>> {
  const out = new Map<string, StoredRecord>();
  const walk = async (dir: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const abs = join(dir, e.name);
      if (e.isDirectory()) await walk(abs);
      // Records live in their shard folders (`ab/`), beside nothing else ending in .json.
      else if (e.name.endsWith('.json') && e.name !== MANIFEST_FILE && /^[0-9a-f]{2}$/.test(basename(dir))) {
        const bytes = await readFile(abs);
        const text = bytes.toString('utf8');
        out.set(e.name.slice(0, -'.json'.length), { bytes, text, record: JSON.parse(text) as Record<string, unknown> });
      }
    }
  };
  await walk(join(p.recordsDir, CURRENT_LINK));
  return out;
}

/** The live build's manifest. */
export async function manifest(p: Project): Promise<{ records: number; key_id: string | null; key_ids_published: string[] }> {
  return JSON.parse(await readFile(join(p.recordsDir, CURRENT_LINK, MANIFEST_FILE), 'utf8'));
}

/** The published key set file, parsed (and checked). */
export async function publishedKeySet(p: Project): Promise<KeySet> {
  return parseKeySet(JSON.parse(await readFile(p.keySetFile, 'utf8')));
}

// ---------------------------------------------------------------------------------------------
// Gateways

export interface TestGateway {
  project: Project;
  gateway: RunningGateway;
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** A live API key. */
  key: string;
  /** Every log line the gateway wrote. */
  logs: LogLine[];
  /** `GET /v1/verify?domain=` with the gateway's key (or `key`; null sends none). */
  verify(domain: string, key?: string | null): Promise<{ status: number; headers: Headers; text: string }>;
  close(): Promise<void>;
}

/** The gateway tests' real gateway (127.0.0.1, port 0, a fresh API key, short refresh), with this suite's verify(). */
export async function startTestGateway(project: Project, overrides: Partial<GatewayOptions> = {}): Promise<TestGateway> {
  const g = await startGatewayForTest(project, overrides);
  return {
    project,
    gateway: g.gateway,
    url: g.url,
    key: g.key,
    logs: g.logs,
    async verify(domain, k = g.key) {
      const res = await g.verify(domain, { key: k });
      return { status: res.status, headers: res.headers, text: res.text };
    },
    close: () => g.close(),
  };
}

/** Request log lines of the gateway for one path (method, status). */
export function requestsTo(t: TestGateway, path: string): { method: unknown; status: unknown }[] {
  return t.logs
    .filter((l) => (l as Record<string, unknown>).msg === 'request' && (l as Record<string, unknown>).path === path)
    .map((l) => ({ method: (l as Record<string, unknown>).method, status: (l as Record<string, unknown>).status }));
}

/** A loopback port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Polls `check` until it returns true (bounded). */
export async function waitFor(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

// ---------------------------------------------------------------------------------------------
// MCP over HTTP

/** An SDK client connected to the gateway's `/mcp` with `Authorization: Bearer <key>` (none when key is null). */
export async function connectHttpClient(url: string, key: string | null): Promise<Client> {
  const headers: Record<string, string> = key === null ? {} : { Authorization: `Bearer ${key}` };
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } });
  const client = new Client({ name: 'mvr-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** The text of a tool result's first content item (asserting it is text). */
export function firstText(result: unknown): string {
  const content = (result as { content?: unknown }).content as { type: string; text?: string }[] | undefined;
  const first = content?.[0];
  if (!first || first.type !== 'text' || typeof first.text !== 'string') throw new Error(`no text content in ${JSON.stringify(result)}`);
  return first.text;
}

// ---------------------------------------------------------------------------------------------
// The CLI

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** This process's environment without MVR_* and NODE_OPTIONS, plus `extra`. */
export function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (name.startsWith('MVR_') || name === 'NODE_OPTIONS' || name.startsWith('VITEST') || name === 'SOURCE_DATE_EPOCH') continue;
    env[name] = value;
  }
  return { ...env, NO_COLOR: '1', ...extra };
}

/** `node bin/mvr.js ...args` in /work/main; resolves with the exit code and output (never rejects on a non-zero exit). */
export function runCli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['bin/mvr.js', ...args], { cwd: ROOT, env: cliEnv(env), timeout: 30_000 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') {
        reject(new Error(`mvr ${args.join(' ')} did not exit normally: ${error.message}\n${stderr}`));
        return;
      }
      resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Clean-up

/** Closes every gateway and removes every temp folder made in this test file (use in afterAll). */
export async function cleanup(): Promise<void> {
  await Promise.all(tempDirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
  await cleanupProjects();
}
