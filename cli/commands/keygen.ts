import { keyConfigSha256 } from '../../core/ohttp.ts';
import { snakeCaseMembers } from '../../presentation/json-members.ts';
import { defineCommand } from '../command.ts';
import { commandOptions } from '../config.ts';

const options = commandOptions('keys', 'issuer', 'signingKey');

import { join } from 'node:path';
import { createLogKey, LOG_KEY_FILE, logOrigin } from '../../keyring/log-key.ts';
import { createOhttpKey, OHTTP_CONFIG_FILE, OHTTP_KEY_FILE } from '../../keyring/ohttp-key.ts';
import { keygenEndorsed, listKeys, loadActiveKey, retireKey } from '../../keyring/signing-keys.ts';
import { createWitnessKey, witnessName } from '../../witness/server/witness-key.ts';
import { runAction } from '../cli-output.ts';

export default defineCommand({
  meta: {
    name: 'keygen',
    description:
      'Create a new Ed25519 signing key (mode 0600) under keys/ and make it active, endorsed by the key that was active (or MVR_SIGNING_KEY); older keys stay published',
  },
  args: {
    ...options.args,
    list: { type: 'boolean', description: 'list the keys instead (kid, active, retired)' },
    retire: { type: 'string', description: 'stop publishing the key with this kid (not the active one)' },
    log: {
      type: 'boolean',
      description: 'create the transparency log key instead (keys/log.key, 0600; named <issuer>/log); prints its verifier key',
    },
    witness: {
      type: 'boolean',
      description:
        'create a witness key instead (keys/witness.key, 0600; named <issuer>/witness, so pass your own --issuer); prints its verifier key',
    },
    ohttp: {
      type: 'boolean',
      description:
        "create the gateway's Oblivious HTTP key instead (keys/ohttp.key, 0600, and its public configuration keys/ohttp-keys.bin, whose SHA-256 the next build signs); prints that hash",
    },
    json: { type: 'boolean', description: 'print JSON' },
  },
  run: ({ args, io }) =>
    runAction(io, Boolean(args.json), async () => {
      const { keys: keysDir, issuer, signingKey } = options.resolve(args, io.env);
      if (args.log) {
        const key = await createLogKey(keysDir, logOrigin(issuer));
        if (args.json) io.stdout.write(`${JSON.stringify({ vkey: key.vkey, file: join(keysDir, LOG_KEY_FILE) })}\n`);
        else {
          io.stdout.write(`${key.vkey}\n`);
          io.stderr.write(
            `new log key for ${key.name} in ${join(keysDir, LOG_KEY_FILE)} (0600; in CI pass its contents as MVR_LOG_KEY); the next build publishes the verifier key above\n`,
          );
        }
        return;
      }
      if (args.ohttp) {
        const key = await createOhttpKey(keysDir);
        const sha256 = keyConfigSha256(key.configBytes);
        if (args.json) io.stdout.write(`${JSON.stringify({ key_config_sha256: sha256, file: join(keysDir, OHTTP_KEY_FILE) })}\n`);
        else {
          io.stdout.write(`${sha256}\n`);
          io.stderr.write(
            `new Oblivious HTTP key in ${join(keysDir, OHTTP_KEY_FILE)} (0600; the gateway's alone) and its configuration in ${join(keysDir, OHTTP_CONFIG_FILE)} (public; the build signs its SHA-256 above); serve and build with this keys folder\n`,
          );
        }
        return;
      }
      if (args.witness) {
        const { key, file } = await createWitnessKey(keysDir, witnessName(issuer));
        if (args.json) io.stdout.write(`${JSON.stringify({ vkey: key.vkey, file })}\n`);
        else {
          io.stdout.write(`${key.vkey}\n`);
          io.stderr.write(
            `new witness key for ${key.name} in ${file} (0600; or pass its contents as MVR_WITNESS_KEY); give the verifier key above to the logs you witness, for their policies\n`,
          );
        }
        return;
      }
      if (args.list) {
        const keys = await listKeys(keysDir);
        if (args.json) io.stdout.write(`${JSON.stringify(snakeCaseMembers(keys))}\n`);
        else for (const k of keys) io.stdout.write(`${k.kid}${k.active ? '  active' : ''}${k.retired ? '  retired' : ''}\n`);
        return;
      }
      if (args.retire) {
        await retireKey(keysDir, args.retire);
        io.stderr.write(`retired ${args.retire}: it leaves the key set at the next build\n`);
        return;
      }
      // The key that signs today endorses the new one: gateways and verifiers that trust it trust the new key.
      const { kid, endorsedBy } = await keygenEndorsed(keysDir, await loadActiveKey(keysDir, signingKey));
      if (args.json) io.stdout.write(`${JSON.stringify({ kid, keys_dir: keysDir, endorsed_by: endorsedBy })}\n`);
      else {
        io.stdout.write(`${kid}\n`);
        io.stderr.write(
          `new signing key ${kid} is active (${keysDir}), ${
            endorsedBy
              ? `endorsed by ${endorsedBy}`
              : 'endorsed by no key: a gateway or verifier that pinned another key must be given this one (--trusted-keys)'
          }; run "mvr build" to sign with it\n`,
        );
      }
    }),
});
