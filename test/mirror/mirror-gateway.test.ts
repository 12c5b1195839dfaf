/**
 * `mvr mirror --from <gateway URL>`: the same mirror through the gateway's mirror routes, with an
 * API key of the mirror scope; an ordinary key is refused by the gateway, and the mirror says so;
 * a gateway answering more than the statement signs is refused before its bytes are read.
 */
import { readFile, readlink } from 'node:fs/promises';
import { createServer, request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import { addApiKey, cleanup, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { NOV } from '../support/logged-project.ts';
import { packedProject, packsOf } from '../support/mirror.ts';
import { type Project, removeTempDirs, tempDir, UNAUDITED } from '../support/project.ts';
import { endlessBody } from '../support/static-origin.ts';

let project: Project;
let g: TestGateway;
let mirrorKey: string;

beforeAll(async () => {
  project = await packedProject(NOV);
  g = await startTestGateway(project);
  mirrorKey = (await addApiKey(g, 'mirror', ['mirror'])).key;
}, 60_000);
afterAll(async () => {
  await cleanup();
  await removeTempDirs();
});

const mirror = (dir: string, key: string, more: string[] = []) =>
  runCli(['mirror', '--from', g.url, '--to', dir, '--trusted-keys', project.keySetFile, '--json', ...more], { MVR_API_KEY: key });

describe('mvr mirror of a gateway', () => {
  it('mirrors the live build through the mirror routes, every pack checked, and answers offline', async () => {
    const dir = join(await tempDir('mvr-mirror-'), 'mirror');
    const run = await mirror(dir, mirrorKey);
    expect(run.stderr).not.toMatch(/MIRROR_REFUSED|FETCH_FAILED/);
    expect(run.code).toBe(0);
    const packs = await packsOf(project);
    const statement = JSON.parse(await readFile(join(project.recordsDir, 'current', 'statement.json'), 'utf8')) as { build: string };
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: true, build: statement.build, packs_fetched: packs.length });
    expect(await readlink(join(dir, 'current'))).toBe(`builds/${statement.build}`);
    for (const file of ['statement.json', 'domain-map', 'pack-index'])
      expect((await readFile(join(dir, 'current', file))).equals(await readFile(join(project.recordsDir, 'current', file)))).toBe(true);
    const absent = await runCli(['verify', UNAUDITED, '--mirror', dir, '--json']);
    expect(JSON.parse(absent.stdout)).toMatchObject({ code: 'NEVER_AUDITED', absence: { valid: true, build: statement.build } });
  });

  it('an ordinary key: the gateway refuses it (403) and the mirror says which scope it needs; nothing is made live', async () => {
    const dir = join(await tempDir('mvr-mirror-'), 'mirror');
    const run = await mirror(dir, g.key);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: false, code: 'FETCH_FAILED' });
    expect(run.stdout).toMatch(/403.*--scope mirror/);
    expect(run.stdout).not.toContain(g.key);
    expect(await readlink(join(dir, 'current')).catch(() => null)).toBeNull();
  });

  it('a gateway answering a map longer than the statement signs: refused at its Content-Length, before its bytes are read', async () => {
    // A hostile gateway: the real one's answers, but a 64 MiB domain map (the limits table allows 512 MiB).
    const longMap = endlessBody(64 * 1024 * 1024, true);
    const hostile = createServer((req, res) => {
      if (req.url?.endsWith('/domain-map')) return longMap(req, res);
      const upstream = request(
        new URL(req.url ?? '/', g.url),
        { method: req.method, headers: { ...req.headers, host: new URL(g.url).host } },
        (a) => {
          res.writeHead(a.statusCode ?? 502, a.headers);
          a.pipe(res);
        },
      );
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
    try {
      const dir = join(await tempDir('mvr-mirror-'), 'mirror');
      const url = `http://127.0.0.1:${(hostile.address() as { port: number }).port}`;
      const run = await runCli(['mirror', '--from', url, '--to', dir, '--trusted-keys', project.keySetFile, '--json'], {
        MVR_API_KEY: mirrorKey,
      });
      const out = JSON.parse(run.stdout) as { code: string; message: string };
      expect(out.code).toBe('MIRROR_REFUSED');
      expect(run.code).toBe(21);
      expect(out.message).toMatch(/domain-map at http:\/\/127\.0\.0\.1:\d+ is larger than the \d+ bytes a mirror reads of it/);
      await longMap.ended;
      // The client hung up at the headers: what was written is what the socket took, never the whole.
      expect(longMap.sent()).toBeLessThan(64 * 1024 * 1024);
      expect(await readlink(join(dir, 'current')).catch(() => null)).toBeNull();
    } finally {
      hostile.closeAllConnections();
      await new Promise((resolve) => hostile.close(resolve));
    }
  });

  it('without an API key: a usage error naming --api-key', async () => {
    const run = await runCli(['mirror', '--from', g.url, '--to', join(await tempDir(), 'm'), '--trusted-keys', project.keySetFile]);
    expect(run.stderr).toMatch(/INVALID_CONFIG: .*--api-key/);
    expect(run.code).toBe(2);
  });
});
