/**
 * A new API key works on the very next request: docs/http-api.md's `KEY=$(npx mvr apikey create ...)`
 * then curl, run in bash with the real CLI against the real gateway, on a gateway whose own look
 * at the key file is a minute away (so only the look on an unknown id can find the key), twenty
 * times back to back with no pause. And a flood of made-up ids costs a look at the file's version
 * each, never a read of the file.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import { cleanup, startTestGateway } from '../support/gateway.ts';
import { makeProject, ROOT, removeTempDirs } from '../support/project.ts';

afterAll(async () => {
  await cleanup();
  await removeTempDirs();
});

/** The page of the HTTP API's examples, which the README sends a reader to. */
const EXAMPLES = readFileSync(join(ROOT, 'docs', 'http-api.md'), 'utf8');
/** Its lines that make a key and use it at once, as a user pastes them. */
const CREATE = EXAMPLES.split('\n').find((l) => l.startsWith('KEY=$(npx mvr apikey create'))!;
const FIRST_USE = EXAMPLES.split('\n').find((l) => l.startsWith('curl -sS -H "Authorization: Bearer $KEY"'))!;
const ROUNDS = 20;
/** A gateway that would not look at its key file again by itself during the test. */
const NEVER_BY_ITSELF = 60_000;

function bash(script: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '',
      stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('a new API key', () => {
  it(`works on its first request: the HTTP API page's create-then-curl block, ${ROUNDS} times in ${ROUNDS}`, async () => {
    expect(CREATE).toBeDefined();
    expect(FIRST_USE).toContain('/v1/verify?domain=acme-outdoor.example');
    const project = await makeProject();
    const g = await startTestGateway(project, { refreshMs: NEVER_BY_ITSELF });
    // `npx mvr` is the package's own bin; run directly, twenty rounds take seconds, not a minute.
    const round = [
      CREATE.replace('npx mvr', 'node bin/mvr.js'),
      FIRST_USE.replace('http://127.0.0.1:8787', g.url),
      'echo',
      'echo "$KEY" >&3',
    ].join('\n');
    const script = `exec 3>"$KEYS_OUT"\nfor i in $(seq ${ROUNDS}); do\n${round}\ndone`;
    const keysOut = join(project.root, 'made-keys');
    const r = await bash(script, { MVR_API_KEYS_FILE: project.apiKeysFile, KEYS_OUT: keysOut });
    for (const key of readFileSync(keysOut, 'utf8').split('\n').filter(Boolean)) g.secrets.add(key);
    expect(r.code, r.stderr).toBe(0);
    const answers = r.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { domain?: string; status?: unknown });
    expect(answers).toHaveLength(ROUNDS);
    expect(answers.filter((a) => a.domain === 'acme-outdoor.example' && a.status === 'verified')).toHaveLength(ROUNDS);
  });

  it('a flood of made-up key ids never reads the key file; a key made during it works on its next request', async () => {
    const project = await makeProject();
    const g = await startTestGateway(project, { refreshMs: NEVER_BY_ITSELF });
    const reloads = () => g.gateway.services.apiKeys.counts().reloads;
    const madeUp = (i: number) => `mvr_${String(i).padStart(10, '0')}_${'A'.repeat(43)}`;
    const flood = (n: number) => Promise.all(Array.from({ length: n }, (_, i) => g.verify('acme-outdoor.example', { key: madeUp(i) })));
    const before = reloads();
    expect((await flood(50)).map((r) => r.status)).toEqual(Array(50).fill(401));
    // Each made-up id looked at the file's version only: it did not move, so nothing was read.
    expect(reloads()).toBe(before);

    const created = await runCli(['apikey', 'create', '--label', 'during the flood', '--api-keys', project.apiKeysFile]);
    expect(created.code, created.stderr).toBe(0);
    const key = created.stdout.trim();
    g.secrets.add(key);
    const [fresh, again] = await Promise.all([g.verify('acme-outdoor.example', { key }), flood(50)]);
    expect(fresh.status).toBe(200);
    expect(again.map((r) => r.status)).toEqual(Array(50).fill(401));
    // The file was read once, for the one change: the flood around the new key shared that read.
    expect(reloads()).toBe(before + 1);
    // A known key and a wrong secret of it never cost a look.
    expect((await g.verify('acme-outdoor.example', { key: `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}` })).status).toBe(401);
    expect(reloads()).toBe(before + 1);
  });
});
