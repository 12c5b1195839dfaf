/**
 * The Dockerfile, checked without Docker (no engine runs here), statically: base image, non-root
 * user, nothing secret copied or baked in, health check, exec-form `node bin/mvr.js serve`,
 * compiled JavaScript and runtime-only dependencies. dockerfile-run.test.ts runs what the image runs.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  command,
  contextCopies,
  dockerfile,
  dockerfileText,
  final,
  finalEnv,
  finalStage,
  healthcheck,
  only,
  packageJson,
  ROOT,
} from '../support/dockerfile.ts';

describe('Dockerfile (static)', () => {
  it('builds on a supported Node line (slim or alpine) in every stage, the current LTS by default', () => {
    expect(dockerfile.globalArgs.NODE_VERSION).toBe('24');
    const froms = dockerfile.instructions.filter((x) => x.op === 'FROM');
    expect(froms.length).toBeGreaterThanOrEqual(1);
    for (const from of froms) {
      const image = from.args
        .split(/\s+/)[0]!
        .replace(/\$\{(\w+)\}|\$(\w+)/g, (_m, a?: string, b?: string) => dockerfile.globalArgs[(a ?? b)!] ?? '');
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

  it("has a HEALTHCHECK that asks /healthz with node's fetch (slim images have no curl)", () => {
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
        expect(source).not.toMatch(
          /(^|\/)(keys|records|public|audits|\.git|\.env[^/]*|node_modules|\.tmp)(\/|$)|\.jwk\.json$|\.pem$|api-keys\.json$/,
        );
      }
    }
    expect(
      dockerfile.instructions.some((x) => x.op === 'ADD'),
      'ADD (use COPY)',
    ).toBe(false);
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
          const specifiers = [
            ...text.matchAll(
              /^\s*(?:import|export)\s+(?!type\s)(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm,
            ),
          ].map((m) => (m[1] ?? m[2])!);
          for (const spec of specifiers) {
            // A built-in named without `node:` too: a bundled library's `import("crypto")`.
            if (spec.startsWith('.') || spec.startsWith('/') || isBuiltin(spec)) continue;
            // The package's own imports map (`#shared`: the shared package compiled into dist/shared).
            if (spec.startsWith('#')) {
              if (!Object.hasOwn(packageJson.imports ?? {}, spec)) missing.add(`${spec} (${p.slice(ROOT.length)})`);
              continue;
            }
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
    expect(
      entries.some((e) => /^!/.test(e) && /keys|records|jwk/.test(e)),
      'no exception re-includes keys',
    ).toBe(false);
  });
});
