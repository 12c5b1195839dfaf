/**
 * The README's shell examples, and those of the docs pages it sends a reader to for the HTTP API,
 * MCP and operating, work as pasted into a fresh clone: every line of their ```sh and ```bash
 * blocks runs, page by page in order, in one bash (so `KEY=$(...)` carries over), in the project root,
 * against a real gateway. Two adaptations only: the gateway's address (a free port, not 8787),
 * and the environment (the MVR_* folder variables pointing at a temp project, so the checkout's
 * own keys/, records/ and public/ are never touched; npm's update notice and install scripts off). Lines that need what a test machine has not (a
 * bucket, Redis elsewhere, minutes) are skipped by name below, and the test fails if one of them
 * leaves the pages (the list cannot go stale) or if fewer than five lines ran.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanup, startTestGateway } from '../support/gateway.ts';
import { makeProject, ROOT } from '../support/project.ts';
import { waitForClose } from '../support/wait.ts';

afterAll(cleanup);

/** Lines not run, each with why. */
const SKIPPED: Record<string, string> = {
  'npm install && npm start': 'installs, then serves until Ctrl-C: test/cli/dev.test.ts runs `mvr dev` as pasted',
  'npm test': 'the suite this test is part of',
  'npx mvr build && npx mvr publish --to s3://mvr-records/prod   # credentials: AWS keys, AWS_PROFILE, or the ECS/EKS/EC2 role':
    'needs a real bucket (test/scale/s3.test.ts publishes to a local one)',
  'npx mvr apikey create --label shop --redis redis://redis.internal:6379':
    'needs the Redis at redis.internal (test/scale/redis.test.ts uses a local one)',
  'npx mvr serve --workers 2 --records s3://mvr-records/prod --trusted-keys trusted-keys.json --redis redis://redis.internal:6379 --trust-proxy 10.0.0.0/8   # on each machine, beside a copy of public/.well-known/merchant-verify-keys.json':
    'needs the bucket and the Redis',
};

/**
 * The pages whose examples run, in this order: a page's lines may use what an earlier page's made
 * (docs/mcp.md's curl, the `KEY` of docs/http-api.md's first line).
 */
const PAGES = ['README.md', 'docs/http-api.md', 'docs/mcp.md', 'docs/operating.md'];

/** A page's shell lines, backslash continuations joined, without blank lines. */
function shellExamples(markdown: string): string[] {
  const lines: string[] = [];
  for (const [, body] of markdown.matchAll(/^```(?:sh|bash)\n([\s\S]*?)^```$/gm)) {
    const joined = body!.replace(/\\\n\s*/g, '');
    lines.push(...joined.split('\n').filter((l) => l.trim() !== ''));
  }
  return lines;
}

const byPage = PAGES.map((page) => ({ page, lines: shellExamples(readFileSync(join(ROOT, page), 'utf8')) }));
const examples = byPage.flatMap((p) => p.lines);
const toRun = examples.filter((l) => !(l in SKIPPED));

describe('the shell examples of the README and its pages', () => {
  it('are all run but the ones skipped by name, each of which is still on its page', () => {
    expect(Object.keys(SKIPPED).filter((l) => !examples.includes(l))).toEqual([]);
    expect(byPage.filter((p) => p.lines.length === 0).map((p) => p.page)).toEqual([]);
    expect(toRun.length).toBeGreaterThanOrEqual(5);
  });

  it('run as written, in a clone, against a real gateway', async () => {
    const project = await makeProject();
    // A new API key is picked up at the gateway's next look at the key file; the lines run back to
    // back, on a machine other tests load, so the test gateway looks every 10 ms, not every 250 ms.
    const gw = await startTestGateway(project, { refreshMs: 10 });
    const marker = '@@@ line ';
    const script = [
      'set -e -o pipefail',
      ...toRun.flatMap((line, i) => [`printf '\\n${marker}%d\\n' ${i}`, line.replaceAll('http://127.0.0.1:8787', gw.url)]),
    ].join('\n');
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      NPM_CONFIG_UPDATE_NOTIFIER: 'false',
      // The first `npx mvr` in a clone links the checkout into npm's npx cache and, without this, runs
      // its `prepare` (`npm run build`): 6-8 s of CPU, rewriting dist/ under the other files' CLI runs.
      // The reader has run `npm install` (which builds) and `npm test` has built dist/ already.
      NPM_CONFIG_IGNORE_SCRIPTS: 'true',
      MVR_KEYS_DIR: project.keysDir,
      MVR_API_KEYS_FILE: project.apiKeysFile,
      MVR_RECORDS_DIR: project.recordsDir,
      MVR_PUBLIC_DIR: project.publicDir,
    };
    const child = spawn('bash', ['-c', script], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '',
      stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    const { code } = await waitForClose(child, 'the examples', () => stderr);
    expect(code, stderr).toBe(0);
    const outputs = new Map<string, string>();
    for (const part of stdout.split(`\n${marker}`).slice(1)) {
      const [index, ...rest] = part.split('\n');
      outputs.set(toRun[Number(index)]!, rest.join('\n'));
    }
    expect([...outputs.keys()]).toEqual(toRun);
    for (const [line, output] of outputs) {
      // No line may answer with an error: a problem document carries a numeric 4xx or 5xx status.
      expect(output, line).not.toMatch(/"status":\s*[45]\d\d/);
      if (line.includes('/v1/verify?domain=')) {
        const record = JSON.parse(output) as { domain: string; status: string };
        expect(record.domain, line).toBe(line.includes('never-audited') ? 'never-audited.example' : 'acme-outdoor.example');
        expect(record.status, line).toBe(line.includes('never-audited') ? 'unverified' : 'verified');
      }
      if (line.includes('merchant-verify-keys.json'))
        expect(JSON.parse(output)).toMatchObject({ keys: [expect.objectContaining({ kty: 'OKP' })] });
      if (line.includes('/mcp')) expect(output).toMatch(/"result":.*acme-outdoor\.example/s);
    }
    expect(stderr).toMatch(/created API key \S+ \(shop checkout\)/);
  });
});
