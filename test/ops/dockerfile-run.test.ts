/**
 * What the Docker image would run, run here without Docker: the files its COPY lines put in /app,
 * the ENV it sets, its ENTRYPOINT/CMD, its HEALTHCHECK and its STOPSIGNAL, against real records,
 * while checking that the process writes nothing (a read-only root filesystem).
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../access/api-keys.ts';
import { command, final, finalEnv, healthcheck, only, ROOT, run } from '../support/dockerfile.ts';
import { freePort } from '../support/ports.ts';
import { makeProject, removeTempDirs } from '../support/project.ts';
import { poll, waitForExit } from '../support/wait.ts';

const tempDirs: string[] = [];
const temp = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
};

/** path -> size:mtime of every file and folder under dir (symlinks not followed). */
function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, entry.name);
      if (entry.isSymbolicLink()) {
        out.set(p, 'link');
        continue;
      }
      const st = statSync(p);
      out.set(p, `${st.size}:${st.mtimeMs}`);
      if (entry.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out;
}

describe("the image's command, run here as the image would run it", () => {
  let app: string; // what the final stage's COPY lines put in WORKDIR
  let data: string; // stands for the mounted /data volumes
  let fakeTmp: string; // stands for /tmp (HOME and TMPDIR)
  let apiKey: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    app = temp('mvr-ops-app-');
    data = temp('mvr-ops-data-');
    fakeTmp = temp('mvr-ops-tmp-');
    for (const x of final.filter((i) => i.op === 'COPY')) {
      const parts = x.args.split(/\s+/);
      const from = parts.find((p) => p.startsWith('--from='));
      const [sources, dest] = [parts.filter((p) => !p.startsWith('--')).slice(0, -1), parts[parts.length - 1]!];
      if (from) {
        // The build stage's files are this checkout's: dist as `npm run build` made it, and
        // node_modules (a superset of the pruned one; see the import test above).
        const [source] = sources.map((s) => s.replace(/^\/app\//, ''));
        const target = dest.endsWith('/') ? join(app, dest, source!.split('/').at(-1)!) : join(app, dest);
        if (source === 'node_modules') symlinkSync(join(ROOT, 'node_modules'), target, 'dir');
        else cpSync(join(ROOT, source!), target, { recursive: true });
        continue;
      }
      for (const source of sources) {
        const target = dest.endsWith('/') ? join(app, dest, source) : join(app, dest);
        cpSync(join(ROOT, source), target, { recursive: true });
      }
    }

    // Real data for the mounts: a signed build (a copy of the test project's) and an API key.
    const mapPath = (p: string) => p.replace(/^\/(data|tmp)(?=\/|$)/, (_m, top: string) => (top === 'data' ? data : fakeTmp));
    env = Object.fromEntries(Object.entries(finalEnv).map(([k, v]) => [k, mapPath(v)]));
    const project = await makeProject();
    cpSync(project.recordsDir, env.MVR_RECORDS_DIR!, { recursive: true, verbatimSymlinks: true });
    cpSync(project.publicDir, env.MVR_PUBLIC_DIR!, { recursive: true, verbatimSymlinks: true });
    mkdirSync(join(env.MVR_API_KEYS_FILE!, '..'), { recursive: true });
    apiKey = (await createApiKey(env.MVR_API_KEYS_FILE!, 'ops test')).key;
    expect(apiKey).toMatch(/^mvr_/);
  }, 60_000);

  afterAll(async () => {
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
    await removeTempDirs();
  });

  it('serves records, passes its own HEALTHCHECK, writes nothing, and exits 0 on its STOPSIGNAL', async () => {
    const port = await freePort();
    // Loopback only here; in the image HOST is 0.0.0.0.
    const runEnv = { PATH: process.env.PATH ?? '', ...env, HOST: '127.0.0.1', PORT: String(port), TMPDIR: fakeTmp };
    const before = { app: snapshot(app), data: snapshot(data), tmp: snapshot(fakeTmp) };
    expect(before.tmp.size).toBe(0);
    expect(before.data.size).toBeGreaterThan(10);
    const [bin, ...args] = command();
    const child = spawn(bin === 'node' ? process.execPath : bin!, args, { cwd: app, env: runEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    try {
      const base = `http://127.0.0.1:${port}`;
      // Up, or exited: either ends the wait; a gateway that did neither within 30 s fails it.
      const state = async () => {
        if (child.exitCode !== null) return 'exited';
        return (await fetch(`${base}/healthz`).then(
          (r) => r.ok,
          () => false,
        ))
          ? 'up'
          : 'starting';
      };
      const { value: came } = await poll(state, (s) => s !== 'starting', { timeoutMs: 30_000, intervalMs: 200 }).catch(() => ({
        value: 'starting',
      }));
      if (came !== 'up') throw new Error(`the gateway did not come up (${came}):\n${out}`);
      const health = (await (await fetch(`${base}/healthz`)).json()) as { status: string };
      expect(health.status).toBe('ok');

      // The HEALTHCHECK command exactly as written, in the container's environment.
      const { cmd } = healthcheck();
      const probe = await run(cmd[0] === 'node' ? process.execPath : cmd[0]!, cmd.slice(1), { cwd: app, env: runEnv }).then(
        () => 0,
        (e: { code?: number }) => e.code ?? 1,
      );
      expect(probe).toBe(0);

      const res = await fetch(`${base}/v1/verify?domain=acme-outdoor.example`, { headers: { authorization: `Bearer ${apiKey}` } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { domain: string }).domain).toBe('acme-outdoor.example');
      const keySet = await fetch(`${base}/.well-known/merchant-verify-keys.json`);
      expect(keySet.status).toBe(200);
    } finally {
      child.kill(only('STOPSIGNAL').args as NodeJS.Signals);
    }
    try {
      expect(await waitForExit(child, "the image's command after its STOPSIGNAL", () => out)).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }

    // Nothing was written: not to the code, not to the mounted data, not even to /tmp.
    expect(snapshot(app)).toEqual(before.app);
    expect(snapshot(data)).toEqual(before.data);
    expect([...snapshot(fakeTmp).keys()]).toEqual([...before.tmp.keys()]);

    // The health check fails when nothing serves.
    const { cmd } = healthcheck();
    const down = await run(process.execPath, cmd.slice(1), { cwd: app, env: runEnv }).then(
      () => 0,
      (e: { code?: number }) => e.code ?? 1,
    );
    expect(down).not.toBe(0);
  }, 90_000);

  it('runs the compiled JavaScript: the files it copies hold no TypeScript source', () => {
    const files = readdirSync(app, { recursive: true, withFileTypes: false }) as string[];
    expect(files.filter((f) => !f.startsWith('node_modules') && /\.(ts|mts)$/.test(f) && !/\.d\.ts$/.test(f))).toEqual([]);
    expect(files).toEqual(
      expect.arrayContaining(['bin/mvr.js', 'dist/cli/cli.js', 'dist/builder/worker.js', 'packages/verifier/dist/index.js']),
    );
  });
});
