/**
 * `npm start` is `mvr dev`: keys made if missing, the samples built (dated to today), a dev API
 * key, the gateway, and a curl line and a verify line that work as printed. Run here as a new
 * user would, in an empty project folder, and the printed lines are then run as they are. A
 * second `mvr dev` on the same port stops first and changes nothing.
 */
import { spawn } from 'node:child_process';
import { cp, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../support/cli.ts';
import { snapshot } from '../support/outputs.ts';
import { canListen } from '../support/ports.ts';
import { ROOT, removeTempDirs, SAMPLE_AUDITS, tempDir } from '../support/project.ts';
import { waitFor, waitForExit } from '../support/wait.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Starts `mvr dev` in `dir`; resolves with the child and its stderr once the gateway is up. */
async function startDev(dir: string, port: string) {
  const child = spawn(process.execPath, [join(ROOT, 'bin/mvr.js'), 'dev', '--port', port], {
    cwd: dir,
    env: cliEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = ''; // the gateway's log
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  await new Promise<void>((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (s: string) => {
      stderr += s;
      if (stderr.includes('Ctrl-C stops the gateway.')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`mvr dev exited ${code}: ${stderr}`)));
  });
  const curl = /curl -sS -H 'Authorization: Bearer ([^']+)' '([^']+)'/.exec(stderr);
  if (!curl) throw new Error(`no curl line in: ${stderr}`);
  return { child, stderr, log: () => stdout, key: curl[1]!, url: curl[2]! };
}

// One `mvr dev` for the file, in an empty project folder as a new user would start it: the first
// test checks what it made and printed, the second starts another on its port beside it.
let dir: string;
let dev: Awaited<ReturnType<typeof startDev>>;
beforeAll(async () => {
  dir = await tempDir('mvr-dev-');
  await cp(SAMPLE_AUDITS, join(dir, 'audits'), { recursive: true });
  dev = await startDev(dir, '0');
});
afterAll(async () => {
  if (dev && dev.child.exitCode === null) {
    dev.child.kill('SIGTERM');
    await waitForExit(dev.child, 'mvr dev after SIGTERM', dev.log);
  }
  await removeTempDirs();
});

describe('mvr dev (npm start)', () => {
  it('prints a curl line and a verify --log line that work as pasted; makes both keys, 0600; records dated to today', async () => {
    expect((await stat(join(dir, 'keys/log.key'))).mode & 0o777).toBe(0o600);
    const res = await fetch(dev.url, { headers: { authorization: `Bearer ${dev.key}` } });
    expect(res.status).toBe(200);
    const record = (await res.json()) as { last_audited_at: string };
    expect(record).toMatchObject({ domain: 'acme-outdoor.example', status: 'verified' });
    // The sample audits carry fixed dates; the dev build moves them so the typical one is 3 days old.
    const age = Date.now() - Date.parse(record.last_audited_at);
    expect(age).toBeGreaterThan(2 * DAY_MS);
    expect(age).toBeLessThan(4 * DAY_MS);
    expect(dev.stderr).toMatch(
      /dated the 33 audits of .* relative to today \(moved \d+ days? (later|earlier): the typical audit was made 3 days ago\); the files are unchanged/,
    );
    expect(await readFile(join(dir, 'audits/verified.jsonl'), 'utf8')).toBe(await readFile(join(SAMPLE_AUDITS, 'verified.jsonl'), 'utf8'));

    const verifyLine = /npx mvr (verify .+)$/m.exec(dev.stderr)![1]!;
    const verified = await runCli(verifyLine.split(' '));
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(/signature {2}valid/);
    expect(verified.stdout).toMatch(/audited {4}\d{4}-\d\d-\d\d \([2-4] days ago\); next audit/);
    expect(verified.stdout).toMatch(/log {8}included: entry \d+ of 34/); // 33 records, then the build statement
    // Both keys were taken from the gateway checked, and the output says so; the pinned line (run from the
    // project's folder, as printed) takes neither from it.
    expect(verified.stdout).toMatch(/key set {4}taken from http:\/\/.* \(first use; pin it with --trusted-keys FILE\)/);
    expect(verified.stdout).toMatch(/log key {4}taken from http:\/\/.*merchant-verify-log\.vkey \(first use; /);
    const pinnedLine = /npx mvr (verify .+ --trusted-keys .+)$/m.exec(dev.stderr)![1]!;
    const pinned = await runCli(pinnedLine.split(' ').map((a) => (a.startsWith('public/') ? join(dir, a) : a)));
    expect(pinned.code, pinned.stderr).toBe(0);
    expect(pinned.stdout).toMatch(/log {8}included: entry \d+ of 34/);
    expect(pinned.stdout).not.toContain('first use');
    // The gateway starts with the dev key live: no warning that every request will be refused.
    // (Its log comes through a pipe of its own: waited for, as it may come after the answers.)
    await waitFor(() => dev.log().includes('"level":"info"'), 'an info line in the log of mvr dev');
    expect(dev.log()).not.toMatch(/"level":"warn"/);
    // The banner says how to use another port, and that this is the first dev key.
    // ... a port that is free, not the gateway's own nor a fixed guess.
    const [, suggested, again] = /Another port: npm start -- --port (\d+) \(or PORT=(\d+) npm start\)\./.exec(dev.stderr)!;
    expect(again).toBe(suggested);
    expect(suggested).not.toBe(new URL(dev.url).port);
    expect(await canListen(Number(suggested))).toBe(true);
    expect(dev.stderr).toContain(
      'The API key above is new: each start makes one and revokes the one before (no earlier development key was live;',
    );
  });

  it('a second mvr dev on the busy port exits 2 before it touches keys, records or API keys', async () => {
    const port = new URL(dev.url).port;
    const before = {
      keys: await snapshot(join(dir, 'keys')),
      records: await snapshot(join(dir, 'records')),
      public: await snapshot(join(dir, 'public')),
    };
    const second = await runCli([
      'dev',
      '--port',
      port,
      '--audits',
      join(dir, 'audits'),
      '--records',
      join(dir, 'records'),
      '--public',
      join(dir, 'public'),
      '--keys',
      join(dir, 'keys'),
    ]);
    expect(second.code, second.stderr).toBe(2);
    expect(second.stderr).toMatch(
      new RegExp(`INVALID_CONFIG: --port / PORT ${port}: cannot listen on 127\\.0\\.0\\.1:${port} .*nothing was changed`),
    );
    const free = /Port (\d+) is free: npm start -- --port \1/.exec(second.stderr)?.[1];
    expect(free).toBeDefined();
    expect(free).not.toBe(port);
    expect(await canListen(Number(free))).toBe(true);
    expect(second.stderr).not.toMatch(/built|created/);
    expect({
      keys: await snapshot(join(dir, 'keys')),
      records: await snapshot(join(dir, 'records')),
      public: await snapshot(join(dir, 'public')),
    }).toEqual(before);
    const res = await fetch(dev.url, { headers: { authorization: `Bearer ${dev.key}` } });
    expect(res.status).toBe(200);
  });

  it('a restarted mvr dev says, in its banner, that the key the last start printed is revoked, and it is', async () => {
    dev.child.kill('SIGTERM');
    await waitForExit(dev.child, 'mvr dev after SIGTERM', dev.log);
    const first = dev;
    dev = await startDev(dir, '0');
    expect(dev.key).not.toBe(first.key);
    expect(dev.stderr).toContain(
      'The API key above is new: each start makes one and revokes the one before (the key printed by an earlier start is now revoked; keys you made with mvr apikey are left alone).',
    );
    const refused = await fetch(dev.url, { headers: { authorization: `Bearer ${first.key}` } });
    expect(refused.status).toBe(401);
    const res = await fetch(dev.url, { headers: { authorization: `Bearer ${dev.key}` } });
    expect(res.status).toBe(200);
  });
});
