import { defineCommand } from 'citty';
import { commandOptions } from '../config.ts';

const options = commandOptions('keys');
import { runAction } from '../cli-output.ts';
import { keygen, listKeys, retireKey } from '../../service/signing-keys.ts';

export default defineCommand({
  meta: { name: 'keygen', description: 'Create a new Ed25519 signing key (mode 0600) under keys/ and make it active; older keys stay published' },
  args: {
    ...options.args,
    list: { type: 'boolean', description: 'list the keys instead (kid, active, retired)' },
    retire: { type: 'string', description: 'stop publishing the key with this kid (not the active one)' },
    json: { type: 'boolean', description: 'print JSON' },
  },
  run: ({ args }) =>
    runAction(Boolean(args.json), async () => {
      const keysDir = options.resolve(args, process.env).keys;
      if (args.list) {
        const keys = await listKeys(keysDir);
        if (args.json) process.stdout.write(`${JSON.stringify(keys)}\n`);
        else for (const k of keys) process.stdout.write(`${k.kid}${k.active ? '  active' : ''}${k.retired ? '  retired' : ''}\n`);
        return;
      }
      if (args.retire) {
        await retireKey(keysDir, args.retire);
        process.stderr.write(`retired ${args.retire}: it leaves the key set at the next build\n`);
        return;
      }
      const kid = await keygen(keysDir);
      if (args.json) process.stdout.write(`${JSON.stringify({ kid, keysDir })}\n`);
      else {
        process.stdout.write(`${kid}\n`);
        process.stderr.write(`new signing key ${kid} is active (${keysDir}); run "mvr build" to sign with it\n`);
      }
    }),
});
