/**
 * The README's shell examples, and those of the docs pages it sends a reader to for the HTTP API,
 * MCP and operating, work as pasted into a fresh clone: every line of their ```sh and ```bash
 * blocks runs, page by page in order, in one bash (so `KEY=$(...)` carries over), in the project root,
 * against a real gateway. Two adaptations only: the gateway's address (a free port, not 8787),
 * and the environment (the MVR_* folder variables pointing at a temp project, so the checkout's
 * own keys/, records/ and public/ are never touched; npm's update notice and install scripts off). Lines that need what a test machine has not (a
 * bucket, Redis elsewhere, minutes) are skipped by name below, and the test fails if one of them
 * leaves the pages (the list cannot go stale) or if fewer than five lines ran.
 *
 * The README's "Your own project" runs on its own, the same way: from the clone's root, `mvr init`
 * to a served and verified record of one's own, the gateway its own lines start. Its adaptations:
 * the project goes into a temp folder (not beside the clone), the port is a free one, and no MVR_*
 * variable is set (the project's own folders are the defaults); npm's install scripts are not
 * turned off for it (its lines say --ignore-scripts where they need it).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanup, startTestGateway } from '../support/gateway.ts';
import { freePort } from '../support/ports.ts';
import { makeProject, ROOT, removeTempDirs, tempDir } from '../support/project.ts';
import { waitForClose, waitForExit } from '../support/wait.ts';

afterAll(async () => {
  await cleanup();
  await removeTempDirs();
});

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

/** The README's section run on its own, in a project of its own (its lines start their own gateway). */
const OWN_PROJECT = 'Your own project';

/** `markdown` without its `## heading` section, and that section (empty when there is none). */
function splitSection(markdown: string, heading: string): [rest: string, section: string] {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) return [markdown, ''];
  const next = markdown.indexOf('\n## ', start + 1);
  const end = next < 0 ? markdown.length : next;
  return [markdown.slice(0, start) + markdown.slice(end), markdown.slice(start, end)];
}

const [readmeRest, ownProject] = splitSection(readFileSync(join(ROOT, 'README.md'), 'utf8'), OWN_PROJECT);
const byPage = PAGES.map((page) => ({
  page,
  lines: shellExamples(page === 'README.md' ? readmeRest : readFileSync(join(ROOT, page), 'utf8')),
}));
const examples = byPage.flatMap((p) => p.lines);
const toRun = examples.filter((l) => !(l in SKIPPED));
const ownProjectLines = shellExamples(ownProject);

/**
 * Runs `lines` in one bash in `cwd` with `env` (each changed by `adapt`), a marker before each;
 * resolves with bash's stderr and each line's output by line, once every process the lines started
 * (a gateway in the background) has been stopped: bash leads a process group of its own, which is
 * ended when bash exits, and the output closes when the last of them is gone.
 */
async function runLines(
  lines: string[],
  { cwd, env, adapt }: { cwd: string; env: Record<string, string>; adapt: (line: string) => string },
): Promise<{ code: number | null; stderr: string; outputs: Map<string, string> }> {
  const marker = '@@@ line ';
  const script = ['set -e -o pipefail', ...lines.flatMap((line, i) => [`printf '\\n${marker}%d\\n' ${i}`, adapt(line)])].join('\n');
  const child = spawn('bash', ['-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stdout = '',
    stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const closed = waitForClose(child, 'the examples', () => stderr);
  const code = await waitForExit(child, 'the examples', () => stderr, 50_000);
  try {
    process.kill(-child.pid!, 'SIGTERM');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
  await closed;
  const outputs = new Map<string, string>();
  for (const part of stdout.split(`\n${marker}`).slice(1)) {
    const [index, ...rest] = part.split('\n');
    outputs.set(lines[Number(index)]!, rest.join('\n'));
  }
  return { code, stderr, outputs };
}

/** What every run's environment has: a PATH, a HOME, and npm quiet and without install scripts. */
const BASE_ENV = {
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '',
  NPM_CONFIG_UPDATE_NOTIFIER: 'false',
  // The first `npx mvr` in a clone links the checkout into npm's npx cache and, without this, runs
  // its `prepare` (`npm run build`): 6-8 s of CPU, rewriting dist/ under the other files' CLI runs.
  // The reader has run `npm install` (which builds) and `npm test` has built dist/ already.
  NPM_CONFIG_IGNORE_SCRIPTS: 'true',
};

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
    const { code, stderr, outputs } = await runLines(toRun, {
      cwd: ROOT,
      env: {
        ...BASE_ENV,
        MVR_KEYS_DIR: project.keysDir,
        MVR_API_KEYS_FILE: project.apiKeysFile,
        MVR_RECORDS_DIR: project.recordsDir,
        MVR_PUBLIC_DIR: project.publicDir,
      },
      adapt: (line) => line.replaceAll('http://127.0.0.1:8787', gw.url),
    });
    expect(code, stderr).toBe(0);
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

  it(`of "${OWN_PROJECT}" run as written, from the clone, to a served and verified record of one's own`, async () => {
    expect(ownProjectLines.length).toBeGreaterThanOrEqual(5);
    const parent = await tempDir('mvr-own-project-');
    const port = String(await freePort());
    // As printed: no NPM_CONFIG_IGNORE_SCRIPTS, so a line that would make npx build the clone again shows up in the time it takes.
    const { NPM_CONFIG_IGNORE_SCRIPTS: _, ...asPrinted } = BASE_ENV;
    const built = (await stat(join(ROOT, 'dist/cli/mvr.js'))).mtimeMs;
    const { code, stderr, outputs } = await runLines(ownProjectLines, {
      cwd: ROOT,
      env: asPrinted,
      adapt: (line) => line.replaceAll('../my-shop', join(parent, 'my-shop')).replaceAll('8787', port),
    });
    expect(code, stderr).toBe(0);
    expect([...outputs.keys()]).toEqual(ownProjectLines);
    const verify = ownProjectLines.find((l) => l.includes('mvr verify'))!;
    expect(outputs.get(verify), stderr).toMatch(/^VALID: my-shop\.example$/m);
    // No line built the clone again (npx's prepare when it first links a clone, 10-25 s here, rewriting dist/).
    expect((await stat(join(ROOT, 'dist/cli/mvr.js'))).mtimeMs).toBe(built);
    // The record's own log proof was checked against the pinned log key, and its build tied to the live one.
    expect(outputs.get(verify), stderr).toMatch(/^ {2}log {8}included: entry \d+ of \d+ in \S+\/log$/m);
    expect(outputs.get(verify), stderr).toMatch(/^ {2}statement {2}build \S+ .*in the log: entry/m);
  });
});
