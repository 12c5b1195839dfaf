/**
 * The Dockerfile, checked without Docker (no engine runs here): statically (base image, non-root
 * user, nothing secret copied or baked in, health check, exec-form `node bin/mvr.js serve`,
 * compiled JavaScript and runtime-only dependencies), and by running what the image would run: the files its COPY lines
 * put in /app, the ENV it sets, its ENTRYPOINT/CMD, its HEALTHCHECK and its STOPSIGNAL, against
 * real records, while checking that the process writes nothing (a read-only root filesystem).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { freePort } from '../support/ports.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

// ---------------------------------------------------------------------------------------------
// A Dockerfile reader: continuation lines joined, comments dropped, stages tracked.

interface Instruction {
  stage: number;
  op: string;
  args: string;
  line: number;
}

function readDockerfile(text: string): { instructions: Instruction[]; stages: number; globalArgs: Record<string, string> } {
  const instructions: Instruction[] = [];
  const globalArgs: Record<string, string> = {};
  const lines = text.split('\n');
  let stage = -1;
  for (let i = 0; i < lines.length; i++) {
    const start = i;
    let line = lines[i]!;
    if (/^\s*(#|$)/.test(line)) continue;
    while (/\\\s*$/.test(line) && i + 1 < lines.length) {
      line = line.replace(/\\\s*$/, ' ');
      i++;
      if (/^\s*#/.test(lines[i]!)) continue; // comment lines inside a continuation are dropped
      line += lines[i]!.trim();
    }
    const m = /^\s*([A-Za-z]+)\s+(.*)$/.exec(line);
    if (!m) throw new Error(`Dockerfile line ${start + 1}: cannot read "${line}"`);
    const op = m[1]!.toUpperCase();
    if (op === 'FROM') stage++;
    if (op === 'ARG' && stage < 0) {
      const [name, value = ''] = m[2]!.trim().split('=');
      globalArgs[name!] = value;
    }
    instructions.push({ stage, op, args: m[2]!.trim(), line: start + 1 });
  }
  return { instructions, stages: stage + 1, globalArgs };
}

/** ENV key=value pairs (quoted values allowed). */
function envPairs(args: string): Record<string, string> {
  const out: Record<string, string> = {};
  const re = /([A-Za-z_][A-Za-z0-9_]*)=("([^"]*)"|'([^']*)'|(\S*))/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(args))) out[m[1]!] = m[3] ?? m[4] ?? m[5] ?? '';
  if (!Object.keys(out).length) throw new Error(`ENV ${args}: only the key=value form is read here`);
  return out;
}

const execForm = (args: string, what: string): string[] => {
  if (!args.startsWith('[')) throw new Error(`${what} must use the exec (JSON array) form, got: ${args}`);
  return JSON.parse(args) as string[];
};

const dockerfileText = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const dockerfile = readDockerfile(dockerfileText);
const finalStage = dockerfile.stages - 1;
const final = dockerfile.instructions.filter((x) => x.stage === finalStage);
const finalEnv: Record<string, string> = Object.assign({}, ...final.filter((x) => x.op === 'ENV').map((x) => envPairs(x.args)));
const only = (op: string) => {
  const found = final.filter((x) => x.op === op);
  if (found.length !== 1) throw new Error(`the final stage should have one ${op}, has ${found.length}`);
  return found[0]!;
};
const command = () => [...execForm(only('ENTRYPOINT').args, 'ENTRYPOINT'), ...execForm(only('CMD').args, 'CMD')];
const healthcheck = () => {
  const m = /^((?:--[a-z-]+=\S+\s+)*)CMD\s+(.*)$/.exec(only('HEALTHCHECK').args);
  if (!m) throw new Error('HEALTHCHECK should be HEALTHCHECK [options] CMD [...]');
  return { options: m[1]!.trim(), cmd: execForm(m[2]!, 'HEALTHCHECK CMD') };
};
/** COPY sources from the build context (not --from another stage), in every stage. */
const contextCopies = () =>
  dockerfile.instructions
    .filter((x) => (x.op === 'COPY' || x.op === 'ADD') && !/--from=/.test(x.args))
    .map((x) => {
      const parts = x.args.split(/\s+/).filter((p) => !p.startsWith('--'));
      return { sources: parts.slice(0, -1), dest: parts[parts.length - 1]!, stage: x.stage };
    });
const packageJson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
};

describe('Dockerfile (static)', () => {
  it('builds on a supported Node line (slim or alpine) in every stage, the current LTS by default', () => {
    expect(dockerfile.globalArgs.NODE_VERSION).toBe('24');
    const froms = dockerfile.instructions.filter((x) => x.op === 'FROM');
    expect(froms.length).toBeGreaterThanOrEqual(1);
    for (const from of froms) {
      const image = from.args.split(/\s+/)[0]!.replace(/\$\{(\w+)\}|\$(\w+)/g, (_m, a?: string, b?: string) => dockerfile.globalArgs[(a ?? b)!] ?? '');
      expect(image, `FROM at line ${from.line}`).toMatch(/^node:(20|22|24|26)(\.\d+){0,2}-(slim|alpine)(@sha256:[0-9a-f]{64})?$/);
    }
  });

  it('runs as a non-root user, set before the command', () => {
    const users = final.filter((x) => x.op === 'USER');
    expect(users.length).toBeGreaterThan(0);
    const user = users[users.length - 1]!;
    expect(user.args.split(':')[0]).not.toMatch(/^(root|0)$/);
    const cmdLine = Math.min(only('ENTRYPOINT').line, only('CMD').line);
    expect(user.line).toBeLessThan(cmdLine);
  });

  it('starts `node bin/mvr.js serve` itself (exec form, not through npm or a shell)', () => {
    expect(command()).toEqual(['node', 'bin/mvr.js', 'serve']);
    expect(command().join(' ')).not.toContain('--sign-unverified'); // the gateway holds no private key
  });

  it('listens on 0.0.0.0:8787, exposes it, and stops on SIGTERM', () => {
    expect(finalEnv.HOST).toBe('0.0.0.0');
    expect(finalEnv.PORT).toBe('8787');
    expect(only('EXPOSE').args.split(/\s+/)).toContain('8787');
    expect(only('STOPSIGNAL').args).toBe('SIGTERM');
  });

  it('names the records, public and API key paths in ENV, as absolute paths', () => {
    for (const name of ['MVR_RECORDS_DIR', 'MVR_PUBLIC_DIR', 'MVR_API_KEYS_FILE']) expect(finalEnv[name], name).toMatch(/^\/\S+$/);
  });

  it('is fit for a read-only root filesystem: HOME and the npm cache under /tmp, no npm at run time', () => {
    expect(finalEnv.HOME).toMatch(/^\/tmp(\/|$)/);
    expect(finalEnv.NPM_CONFIG_CACHE).toMatch(/^\/tmp(\/|$)/);
    for (const x of final) if (x.op === 'RUN') expect(x.args, `RUN at line ${x.line}`).not.toMatch(/\bnpm\b|\bnpx\b/);
  });

  it('has a HEALTHCHECK that asks /healthz with node\'s fetch (slim images have no curl)', () => {
    const { cmd, options } = healthcheck();
    expect(cmd[0]).toBe('node');
    expect(cmd.join(' ')).toMatch(/fetch\(/);
    expect(cmd.join(' ')).toContain('/healthz');
    expect(cmd.join(' ')).toMatch(/process\.exit/);
    expect(options).toMatch(/--timeout=/);
  });

  it('copies no keys, records, published output or secrets into the image, and bakes in no secret', () => {
    const copies = contextCopies();
    expect(copies.length).toBeGreaterThan(0);
    for (const { sources } of copies) {
      for (const source of sources) {
        expect(source, 'the whole context').not.toMatch(/^\.\/?$|^\*$/);
        expect(source).not.toMatch(/(^|\/)(keys|records|public|audits|\.git|\.env[^/]*|node_modules|\.tmp)(\/|$)|\.jwk\.json$|\.pem$|api-keys\.json$/);
      }
    }
    expect(dockerfile.instructions.some((x) => x.op === 'ADD'), 'ADD (use COPY)').toBe(false);
    for (const x of dockerfile.instructions.filter((i) => i.op === 'ENV' || i.op === 'ARG')) {
      expect(x.args, `${x.op} at line ${x.line}`).not.toMatch(/MVR_SIGNING_KEY|MVR_API_KEY\b|SECRET|TOKEN|PASSWORD|AWS_/i);
    }
    expect(dockerfileText).not.toMatch(/--mount=type=secret|MVR_SIGNING_KEY\s*=/);
  });

  it('compiles in a build stage and keeps runtime dependencies only: no TypeScript, tsx or esbuild at run time', () => {
    const runs = dockerfile.instructions.filter((x) => x.op === 'RUN' && x.stage < finalStage).map((x) => x.args);
    expect(runs.filter((r) => /\bnpm (ci|install)\b/.test(r))).toEqual([expect.stringMatching(/\bnpm ci\b/)]);
    const build = runs.find((r) => /\bnpm run build\b/.test(r));
    expect(build).toMatch(/npm run build && npm prune --omit=dev/);
    for (const tool of ['typescript', 'tsx', 'esbuild']) {
      expect(Object.keys(packageJson.dependencies ?? {}), tool).not.toContain(tool);
      expect(Object.keys(packageJson.devDependencies ?? {}), tool).toContain(tool);
    }
    const fromBuild = final.filter((x) => x.op === 'COPY' && /--from=build/.test(x.args)).map((x) => x.args.split(/\s+/).at(-2));
    expect(fromBuild).toEqual(['/app/node_modules', '/app/dist', '/app/packages/verifier/package.json', '/app/packages/verifier/dist']);
  });

  it('every package the compiled code imports is a runtime dependency (or a Node built-in), and it holds no TypeScript', () => {
    // bin from the context, dist as the build stage compiles it (`npm test` compiles it first).
    const dirs = ['bin', 'dist'];
    const runtime = new Set(Object.keys(packageJson.dependencies ?? {}));
    const missing = new Set<string>();
    const seen = new Set<string>();
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, entry.name);
        if (entry.isDirectory()) walk(p);
        else if (/\.(ts|mts)$/.test(entry.name) && !/\.d\.ts$/.test(entry.name)) missing.add(`TypeScript source ${p.slice(ROOT.length)}`);
        else if (/\.(js|mjs|cjs)$/.test(entry.name)) {
          const text = readFileSync(p, 'utf8');
          // Type-only imports vanish at run time.
          const specifiers = [...text.matchAll(/^\s*(?:import|export)\s+(?!type\s)(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm)].map((m) => (m[1] ?? m[2])!);
          for (const spec of specifiers) {
            if (spec.startsWith('.') || spec.startsWith('node:') || spec.startsWith('/')) continue;
            const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
            seen.add(name);
            if (!runtime.has(name)) missing.add(`${name} (${p.slice(ROOT.length)})`);
          }
        }
      }
    };
    for (const dir of dirs) walk(join(ROOT, dir));
    expect([...seen]).toEqual(expect.arrayContaining(['h3', 'tldts', 'zod', '@merchant-verify/verifier'])); // the scan sees imports
    expect([...seen]).not.toContain('tsx');
    expect([...missing]).toEqual([]);
  });

  it('.dockerignore keeps node_modules, keys, records, .git, bench/out and .tmp out of the build context', () => {
    const entries = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim().replace(/^\/+|\/+$/g, ''))
      .filter((l) => l && !l.startsWith('#'));
    for (const required of ['node_modules', 'keys', 'records', '.git', 'bench/out', '.tmp']) expect(entries, required).toContain(required);
    expect(entries.some((e) => /^!/.test(e) && /keys|records|jwk/.test(e)), 'no exception re-includes keys').toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// Running what the image runs

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

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code))));

describe('the image\'s command, run here as the image would run it', () => {
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

    // Real data for the mounts: a signed build and an API key, made with the CLI.
    const mapPath = (p: string) => p.replace(/^\/(data|tmp)(?=\/|$)/, (_m, top: string) => (top === 'data' ? data : fakeTmp));
    env = Object.fromEntries(Object.entries(finalEnv).map(([k, v]) => [k, mapPath(v)]));
    const cli = (args: string[], extra: Record<string, string> = {}) =>
      run(process.execPath, [join(ROOT, 'bin', 'mvr.js'), ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...extra } });
    const keys = temp('mvr-ops-keys-');
    await cli(['keygen', '--keys', keys]);
    await cli(['build', '--json', '--keys', keys, '--records', env.MVR_RECORDS_DIR!, '--public', env.MVR_PUBLIC_DIR!]);
    mkdirSync(join(env.MVR_API_KEYS_FILE!, '..'), { recursive: true });
    apiKey = (await cli(['apikey', 'create', '--label', 'ops test', '--api-keys', env.MVR_API_KEYS_FILE!])).stdout.trim();
    expect(apiKey).toMatch(/^mvr_/);
  }, 60_000);

  afterAll(() => {
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
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
      const deadline = Date.now() + 30_000;
      for (;;) {
        const up = await fetch(`${base}/healthz`).then((r) => r.ok, () => false);
        if (up) break;
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the gateway did not come up:\n${out}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      const health = (await (await fetch(`${base}/healthz`)).json()) as { status: string };
      expect(health.status).toBe('ok');

      // The HEALTHCHECK command exactly as written, in the container's environment.
      const { cmd } = healthcheck();
      const probe = await run(cmd[0] === 'node' ? process.execPath : cmd[0]!, cmd.slice(1), { cwd: app, env: runEnv }).then(() => 0, (e: { code?: number }) => e.code ?? 1);
      expect(probe).toBe(0);

      const res = await fetch(`${base}/v1/verify?domain=acme-outdoor.example`, { headers: { authorization: `Bearer ${apiKey}` } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { domain: string }).domain).toBe('acme-outdoor.example');
      const keySet = await fetch(`${base}/.well-known/merchant-verify-keys.json`);
      expect(keySet.status).toBe(200);
    } finally {
      child.kill(only('STOPSIGNAL').args as NodeJS.Signals);
    }
    const code = await Promise.race([exited(child), new Promise<string>((r) => setTimeout(() => r('timeout'), 15_000))]);
    if (code === 'timeout') child.kill('SIGKILL');
    expect(code, out).toBe(0);

    // Nothing was written: not to the code, not to the mounted data, not even to /tmp.
    expect(snapshot(app)).toEqual(before.app);
    expect(snapshot(data)).toEqual(before.data);
    expect([...snapshot(fakeTmp).keys()]).toEqual([...before.tmp.keys()]);

    // The health check fails when nothing serves.
    const { cmd } = healthcheck();
    const down = await run(process.execPath, cmd.slice(1), { cwd: app, env: runEnv }).then(() => 0, (e: { code?: number }) => e.code ?? 1);
    expect(down).not.toBe(0);
  }, 90_000);

  it('runs the compiled JavaScript: the files it copies hold no TypeScript source', () => {
    const files = readdirSync(app, { recursive: true, withFileTypes: false }) as string[];
    expect(files.filter((f) => !f.startsWith('node_modules') && /\.(ts|mts)$/.test(f) && !/\.d\.ts$/.test(f))).toEqual([]);
    expect(files).toEqual(expect.arrayContaining(['bin/mvr.js', 'dist/cli/cli.js', 'dist/builder/worker.js', 'packages/verifier/dist/index.js']));
  });
});
