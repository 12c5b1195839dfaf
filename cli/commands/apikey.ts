import { type ApiKeyTable, createApiKey, listApiKeys, parseScope, revokeApiKey, scopesOf } from '../../access/api-keys.ts';
import { runAction } from '../cli-output.ts';
import { defineCommand } from '../command.ts';
import { apiKeysFileOf, commandOptions, type Env } from '../config.ts';

const options = commandOptions('keys', 'apiKeys', 'redis');
const apiKeysArgs = options.args;

/** Runs `body` on the key table the flags name: Redis with --redis / MVR_REDIS_URL, else the key file. */
async function withTable<T>(
  args: Record<string, unknown>,
  env: Env,
  body: (table: ApiKeyTable | string, where: string) => Promise<T>,
): Promise<T> {
  const config = options.resolve(args, env);
  if (!config.redis) return body(apiKeysFileOf(config), apiKeysFileOf(config));
  const [{ connectRedis }, { redisApiKeyTable }] = await Promise.all([
    import('../../access/redis.ts'),
    import('../../access/api-keys-redis.ts'),
  ]);
  const redis = await connectRedis(config.redis);
  try {
    const table = redisApiKeyTable(redis, config.redis);
    return await body(table, table.name);
  } finally {
    await redis.close();
  }
}

const create = defineCommand({
  meta: { name: 'create', description: 'Create an API key: prints the key once on stdout; only its SHA-256 is stored' },
  args: {
    ...apiKeysArgs,
    label: { type: 'string', description: 'who or what the key is for', required: true },
    scope: { type: 'string', description: 'mirror: the key may also fetch whole builds (GET /v1/mirror); without it the key is ordinary' },
    json: { type: 'boolean', description: 'print {"key","id","label","created","scopes"} as JSON on stdout' },
  },
  run: ({ args, io }) =>
    runAction(io, Boolean(args.json), async () => {
      const scopes = args.scope === undefined ? [] : [parseScope(args.scope)];
      const { key, entry, where } = await withTable(args, io.env, async (table, where) => ({
        ...(await createApiKey(table, args.label, { scopes })),
        where,
      }));
      if (args.json)
        io.stdout.write(`${JSON.stringify({ key, id: entry.id, label: entry.label, created: entry.created, scopes: scopesOf(entry) })}\n`);
      else {
        io.stdout.write(`${key}\n`);
        const scoped = scopes.length > 0 ? `, scope ${scopes.join(' ')}` : '';
        io.stderr.write(`created API key ${entry.id} (${entry.label}${scoped}) in ${where}; it is shown only now, store it safely\n`);
      }
    }),
});

const list = defineCommand({
  meta: { name: 'list', description: 'List API keys: id, label, created, revoked, scopes' },
  args: { ...apiKeysArgs, json: { type: 'boolean', description: 'print the keys as a JSON array' } },
  run: ({ args, io }) =>
    runAction(io, Boolean(args.json), async () => {
      const keys = (await withTable(args, io.env, (table) => listApiKeys(table))).map((entry) => ({
        id: entry.id,
        label: entry.label,
        created: entry.created,
        revoked: entry.revoked,
        scopes: scopesOf(entry),
      }));
      if (args.json) io.stdout.write(`${JSON.stringify(keys)}\n`);
      else {
        io.stdout.write(`${'ID'.padEnd(12)}${'CREATED'.padEnd(26)}${'REVOKED'.padEnd(26)}${'SCOPES'.padEnd(10)}LABEL\n`);
        for (const k of keys)
          io.stdout.write(
            `${k.id.padEnd(12)}${k.created.padEnd(26)}${(k.revoked ?? '-').padEnd(26)}${(k.scopes.join(',') || '-').padEnd(10)}${k.label}\n`,
          );
      }
    }),
});

const revoke = defineCommand({
  meta: { name: 'revoke', description: 'Revoke an API key by id (or by the key itself); a running gateway refuses it within a second' },
  args: {
    ...apiKeysArgs,
    id: { type: 'positional', description: 'key id (from "mvr apikey list"), or the whole key', required: true },
    json: { type: 'boolean', description: 'print {"id","revoked"} as JSON' },
  },
  run: ({ args, io }) =>
    runAction(io, Boolean(args.json), async () => {
      const entry = await withTable(args, io.env, (table) => revokeApiKey(table, args.id));
      if (args.json) io.stdout.write(`${JSON.stringify({ id: entry.id, revoked: entry.revoked })}\n`);
      else io.stderr.write(`revoked API key ${entry.id} (${entry.label})\n`);
    }),
});

export default defineCommand({
  meta: { name: 'apikey', description: 'Manage the API keys the gateway accepts' },
  subCommands: { create, list, revoke },
});
