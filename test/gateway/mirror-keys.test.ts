/**
 * API keys allowed to mirror: `mvr apikey create --scope mirror` stores the scope beside the key's
 * hash (the key file, or Redis with `--redis`), `mvr apikey list` shows it, an unknown scope is a
 * usage error naming the flag, a key made before scopes is ordinary, and a running gateway keeps a
 * key's scope through every reload of the keys (a revocation of another key) until it is revoked.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { connectRedis } from '../../access/redis.ts';
import { runCli } from '../support/cli.ts';
import { cleanup, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { expectProblem } from '../support/gateway-expect.ts';
import { needing } from '../support/programs.ts';
import { GOLD, makeProject, type Project } from '../support/project.ts';
import { REDIS, startRedis } from '../support/redis-server.ts';
import { poll } from '../support/wait.ts';

afterAll(cleanup);

/** A bound on waiting for a gateway to see a change of its keys (a failure past it, never a measure). */
const UNTIL = { timeoutMs: 20_000, intervalMs: 20 };

interface Made {
  key: string;
  id: string;
  scopes: string[];
}

/** `mvr apikey ...` on a key file or (with `redis`) Redis, failing the test on a non-zero exit. */
async function apikey(where: { file: string } | { redis: string }, ...args: string[]) {
  const flags = 'file' in where ? ['--api-keys', where.file] : ['--redis', where.redis];
  const r = await runCli(['apikey', ...args, ...flags]);
  if (r.code !== 0) throw new Error(`mvr apikey ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r;
}

const create = async (where: { file: string } | { redis: string }, label: string, ...more: string[]): Promise<Made> =>
  JSON.parse((await apikey(where, 'create', '--label', label, '--json', ...more)).stdout) as Made;

/**
 * On a running gateway: the mirror key mirrors and the ordinary key may not; after another key is
 * revoked (a reload of every key) the same; after the mirror key is revoked, it is refused.
 */
async function scopesThroughReloads(g: TestGateway, where: { file: string } | { redis: string }, mirror: Made, plain: Made) {
  g.secrets.add(mirror.key).add(plain.key);
  const mirrors = () => g.request('/v1/mirror', { key: mirror.key });
  expect((await poll(mirrors, (r) => r.status === 200, UNTIL)).value.json.build).toEqual(expect.any(String));
  expectProblem(await g.request('/v1/mirror', { key: plain.key }), 403, 'FORBIDDEN');
  expect((await g.verify(GOLD, { key: plain.key })).status).toBe(200);
  expect((await g.verify(GOLD, { key: mirror.key })).status).toBe(200);

  await apikey(where, 'revoke', plain.id);
  await poll(
    () => g.verify(GOLD, { key: plain.key }),
    (r) => r.status === 401,
    UNTIL,
  );
  expect((await mirrors()).status).toBe(200);

  await apikey(where, 'revoke', mirror.id);
  expectProblem((await poll(mirrors, (r) => r.status === 401, UNTIL)).value, 401, 'UNAUTHORIZED');
}

describe('mirror-scoped keys in the key file', async () => {
  const project: Project = await makeProject();
  const where = { file: project.apiKeysFile };

  it('are stored with their scope beside the hash, listed with it; ordinary keys have none', async () => {
    const mirror = await create(where, 'mirror box', '--scope', 'mirror');
    const plain = await create(where, 'checkout');
    expect(mirror.scopes).toEqual(['mirror']);
    expect(plain.scopes).toEqual([]);
    const file = JSON.parse(await readFile(project.apiKeysFile, 'utf8')) as { keys: Record<string, unknown>[] };
    expect(file.keys.find((k) => k.id === mirror.id)).toMatchObject({ scopes: ['mirror'], label: 'mirror box' });
    expect(file.keys.find((k) => k.id === plain.id)).not.toHaveProperty('scopes');
    expect(JSON.stringify(file)).not.toContain(mirror.key.slice(`mvr_${mirror.id}_`.length));

    const listed = JSON.parse((await apikey(where, 'list', '--json')).stdout) as Made[];
    expect(listed.find((k) => k.id === mirror.id)).toMatchObject({ scopes: ['mirror'] });
    expect(listed.find((k) => k.id === plain.id)).toMatchObject({ scopes: [] });
    const table = (await apikey(where, 'list')).stdout.split('\n');
    expect(table[0]).toMatch(/SCOPES/);
    expect(table.find((l) => l.startsWith(mirror.id))).toMatch(/\bmirror\b/);
    expect(table.find((l) => l.startsWith(plain.id))).not.toMatch(/\bmirror\b/);
    expect((await apikey(where, 'list')).stdout).not.toContain(mirror.key);
  });

  it('an unknown scope is a usage error naming the flag, and makes no key', async () => {
    const before = await readFile(project.apiKeysFile, 'utf8');
    const r = await runCli(['apikey', 'create', '--label', 'x', '--scope', 'admin', '--api-keys', project.apiKeysFile]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/INVALID_USAGE.*--scope.*"admin"/);
    expect(await readFile(project.apiKeysFile, 'utf8')).toBe(before);
  });

  it('a key made before scopes (no scopes member) is ordinary: it looks records up, it may not mirror', async () => {
    const g = await startTestGateway(project);
    const old = await create(where, 'from last year');
    const file = JSON.parse(await readFile(project.apiKeysFile, 'utf8')) as { keys: Record<string, unknown>[] };
    for (const k of file.keys) delete k.scopes;
    await writeFile(project.apiKeysFile, JSON.stringify(file));
    g.secrets.add(old.key);
    expect(
      (
        await poll(
          () => g.verify(GOLD, { key: old.key }),
          (r) => r.status === 200,
          UNTIL,
        )
      ).value.status,
    ).toBe(200);
    expectProblem(await g.request('/v1/mirror', { key: old.key }), 403, 'FORBIDDEN');
  });

  it('keep their scope on a running gateway through a reload of the keys, until revoked', async () => {
    const g = await startTestGateway(project);
    await scopesThroughReloads(g, where, await create(where, 'mirror', '--scope', 'mirror'), await create(where, 'plain'));
  });
});

describe.skipIf(!REDIS.path)(needing(REDIS, 'mirror-scoped keys in Redis (real redis-server)'), async () => {
  const redis = REDIS.path ? await startRedis() : null;
  afterAll(() => redis?.stop());

  it('are stored in Redis with their scope, listed with it, and kept through reloads on a gateway reading Redis', async () => {
    const where = { redis: redis!.url };
    const mirror = await create(where, 'mirror', '--scope', 'mirror');
    const plain = await create(where, 'plain');
    const client = await connectRedis(redis!.url);
    try {
      const stored = await client.hGetAll('mvr:api-keys');
      expect(JSON.parse(stored[mirror.id]!)).toMatchObject({ scopes: ['mirror'], revoked: null });
      expect(JSON.parse(stored[plain.id]!)).not.toHaveProperty('scopes');
      expect(JSON.stringify(stored)).not.toContain(mirror.key.slice(`mvr_${mirror.id}_`.length));
    } finally {
      await client.close();
    }
    const listed = JSON.parse((await apikey(where, 'list', '--json')).stdout) as Made[];
    expect(listed.map((k) => [k.id, k.scopes])).toEqual(
      expect.arrayContaining([
        [mirror.id, ['mirror']],
        [plain.id, []],
      ]),
    );
    const g = await startTestGateway(await makeProject(), { redisUrl: redis!.url });
    await scopesThroughReloads(g, where, mirror, plain);
  });
});
