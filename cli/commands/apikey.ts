import { defineCommand } from 'citty';
import { createApiKey, listApiKeys, revokeApiKey } from '../../service/api-keys.ts';
import { apiKeysFileOf, commandOptions } from '../config.ts';

const options = commandOptions('keys', 'apiKeys');
const apiKeysArgs = options.args;
const apiKeysFile = (args: Record<string, unknown>) => apiKeysFileOf(options.resolve(args, process.env));
import { runAction } from '../cli-output.ts';

const create = defineCommand({
  meta: { name: 'create', description: 'Create an API key: prints the key once on stdout; only its SHA-256 is stored' },
  args: { ...apiKeysArgs, label: { type: 'string', description: 'who or what the key is for', required: true }, json: { type: 'boolean' } },
  run: ({ args }) =>
    runAction(Boolean(args.json), async () => {
      const file = apiKeysFile(args);
      const { key, entry } = await createApiKey(file, args.label);
      if (args.json) process.stdout.write(`${JSON.stringify({ key, id: entry.id, label: entry.label, created: entry.created })}\n`);
      else {
        process.stdout.write(`${key}\n`);
        process.stderr.write(`created API key ${entry.id} (${entry.label}) in ${file}; it is shown only now, store it safely\n`);
      }
    }),
});

const list = defineCommand({
  meta: { name: 'list', description: 'List API keys: id, label, created, revoked' },
  args: { ...apiKeysArgs, json: { type: 'boolean' } },
  run: ({ args }) =>
    runAction(Boolean(args.json), async () => {
      const keys = (await listApiKeys(apiKeysFile(args))).map(({ id, label, created, revoked }) => ({ id, label, created, revoked }));
      if (args.json) process.stdout.write(`${JSON.stringify(keys)}\n`);
      else {
        process.stdout.write(`${'ID'.padEnd(12)}${'CREATED'.padEnd(26)}${'REVOKED'.padEnd(26)}LABEL\n`);
        for (const k of keys) process.stdout.write(`${k.id.padEnd(12)}${k.created.padEnd(26)}${(k.revoked ?? '-').padEnd(26)}${k.label}\n`);
      }
    }),
});

const revoke = defineCommand({
  meta: { name: 'revoke', description: 'Revoke an API key by id; a running gateway refuses it within a second' },
  args: { ...apiKeysArgs, id: { type: 'positional', description: 'key id (from "mvr apikey list")', required: true }, json: { type: 'boolean' } },
  run: ({ args }) =>
    runAction(Boolean(args.json), async () => {
      const entry = await revokeApiKey(apiKeysFile(args), args.id);
      if (args.json) process.stdout.write(`${JSON.stringify({ id: entry.id, revoked: entry.revoked })}\n`);
      else process.stderr.write(`revoked API key ${entry.id} (${entry.label})\n`);
    }),
});

export default defineCommand({
  meta: { name: 'apikey', description: 'Manage the API keys the gateway accepts' },
  subCommands: { create, list, revoke },
});
