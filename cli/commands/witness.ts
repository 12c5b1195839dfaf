import { readFile } from 'node:fs/promises';
import { ConfigError } from '../../core/errors.ts';
import { parseVkey } from '../../keyring/log-key.ts';
import { runAction } from '../cli-output.ts';
import { defineCommand } from '../command.ts';
import { commandOptions } from '../config.ts';

const options = commandOptions('logVkey', 'witnessState', 'keys', 'witnessKey', 'host', 'port');

export default defineCommand({
  meta: {
    name: 'witness',
    description:
      'Run a C2SP witness (POST /add-checkpoint): cosign the checkpoints of the logs named by --log-vkey after checking they extend the last one seen',
  },
  args: options.describe({
    port: 'port to listen on (0 picks a free one)',
    keys: 'keys folder holding witness.key (from "mvr keygen --witness")',
  }),
  run: ({ args, io }) =>
    runAction(io, false, async () => {
      const config = options.resolve(args, io.env);
      if (!config.logVkey)
        throw new ConfigError('--log-vkey / MVR_WITNESS_LOG_VKEY: name the file of the verifier keys of the logs to witness');
      const [{ loadWitnessKey }, { WitnessState }, { startWitness }] = await Promise.all([
        import('../../witness/server/witness-key.ts'),
        import('../../witness/server/state.ts'),
        import('../../witness/server/http.ts'),
      ]);
      const logs = await readLogKeys(config.logVkey);
      const key = await loadWitnessKey(config.keys, config.witnessKey);
      const state = await new WitnessState(config.witnessState).open();
      const running = await startWitness({ key, logs, state, clock: Date.now }, { host: config.host, port: config.port });
      io.stderr.write(
        `witness ${key.vkey}\nwitnessing ${logs.map((l) => l.name).join(', ')}; state in ${config.witnessState}\nlistening on ${running.url} (POST ${running.url}/add-checkpoint)\n`,
      );
      const stop = () => void running.close().then(() => process.exit(0));
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    }),
});

/** The logs' verifier keys, one a line (blank lines and # comments allowed); each names its log's origin. */
async function readLogKeys(file: string) {
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new ConfigError(`--log-vkey ${file}: ${error.code === 'ENOENT' ? 'no such file' : error.message}`);
  });
  const keys = text
    .split('\n')
    .flatMap((line, i) => (line.trim() === '' || line.trim().startsWith('#') ? [] : [parseVkey(line, `${file}:${i + 1}`)]));
  if (keys.length === 0) throw new ConfigError(`--log-vkey ${file}: no verifier key in the file`);
  return keys;
}
