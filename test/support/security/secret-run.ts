/**
 * What the secret scan (secrets.test.ts) looks through: every answer the run received, every API
 * key it made or sent, the CLI's output, and the private keys seen under keys/; with the request,
 * MCP and CLI helpers that record as they go. One run per test file (a module per process).
 */
import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { type CliResult, runCli } from '../cli.ts';
import type { Reply, RequestOptions, TestGateway } from '../gateway.ts';

/** Every answer the test received: status line, headers and body, as text. */
export const seen: { what: string; text: string }[] = [];
/** Every API key this test made or sent (valid, revoked, forged). */
export const apiKeys = new Set<string>();
/** CLI output to scan (everything but the stdout of `apikey create`, which is the key by design). */
export const cliOutput: { what: string; text: string }[] = [];
/** Private `d` values seen in keys/ during the run (a retired key's file moves). */
export const privateDs = new Set<string>();

export function remember(what: string, r: Reply): Reply {
  const headers = [...r.headers].map(([k, v]) => `${k}: ${v}`).join('\n');
  seen.push({ what, text: `${r.status}\n${headers}\n\n${r.text}` });
  return r;
}
export const req = (t: TestGateway, path: string, opts: RequestOptions = {}) =>
  t.request(path, opts).then((r) => remember(`${opts.method ?? 'GET'} ${path}`, r));
export const verify = (t: TestGateway, domain: string, opts: RequestOptions = {}) =>
  t.verify(domain, opts).then((r) => remember(`verify ${domain}`, r));

export async function mcp(t: TestGateway, authorization: string | null, body: unknown): Promise<Reply> {
  const headers: Record<string, string> = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
  if (authorization !== null) {
    headers.authorization = authorization;
    t.sentAuthorizations.add(authorization);
  }
  const res = await fetch(`${t.url}/mcp`, { method: 'POST', headers, body: JSON.stringify(body) });
  const bytes = Buffer.from(await res.arrayBuffer());
  const text = bytes.toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return remember(`mcp ${JSON.stringify(body).slice(0, 80)}`, { status: res.status, headers: res.headers, bytes, text, json });
}
export const call = (domain: unknown, id = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'verify_merchant', arguments: { domain } },
});

export async function cli(args: string[], scanStdout = true): Promise<CliResult> {
  const r = await runCli(args);
  if (scanStdout) cliOutput.push({ what: `mvr ${args.join(' ')} (stdout)`, text: r.stdout });
  cliOutput.push({ what: `mvr ${args.join(' ')} (stderr)`, text: r.stderr });
  expect(r.code, `mvr ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r;
}

/** The `d` of every private key under keys/signing and keys/retired now. */
export async function collectPrivateKeys(keysDir: string): Promise<void> {
  for (const sub of ['signing', 'retired']) {
    const dir = join(keysDir, sub);
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      const jwk = JSON.parse(await readFile(join(dir, name), 'utf8')) as { d?: unknown };
      expect(typeof jwk.d, `${sub}/${name} is a private JWK`).toBe('string');
      privateDs.add(jwk.d as string);
    }
  }
}

export const forged = () => `mvr_${randomBytes(5).toString('hex')}_${randomBytes(32).toString('base64url')}`;
export const secretOf = (key: string) => key.split('_').slice(2).join('_');

/** Each secret the scan looks for, with what it is (for the failure message). */
function needles(): Map<string, string> {
  const out = new Map<string, string>();
  for (const key of apiKeys) {
    out.set(key, `API key ${key.split('_')[1]}`);
    out.set(secretOf(key), `secret part of API key ${key.split('_')[1]}`);
  }
  for (const d of privateDs) out.set(d, 'a private signing key (d)');
  out.set('"d":', 'the member "d"');
  return out;
}

/** Adds to `found` a line for each secret `text` (at `where`) holds. */
export function scan(where: string, text: string, found: string[]): void {
  for (const [needle, what] of needles()) if (text.includes(needle)) found.push(`${where} holds ${what}`);
}
