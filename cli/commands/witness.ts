import { readFile } from 'node:fs/promises';
import { ConfigError } from '../../core/errors/errors.ts';
import { parseVkey } from '../../keyring/log-key.ts';
import type { WitnessedLog } from '../../witness/server/add-checkpoint.ts';
import { runAction } from '../cli-output.ts';
import { defineCommand } from '../command.ts';
import { commandOptions } from '../config.ts';

/** The options `mvr witness` reads. */
export const WITNESS_OPTIONS = ['logVkey', 'witnessState', 'keys', 'witnessKey', 'host', 'witnessPort'] as const;
const options = commandOptions(...WITNESS_OPTIONS);

export default defineCommand({
  meta: {
    name: 'witness',
    description:
      'Run a C2SP witness (POST /add-checkpoint): cosign the checkpoints of the logs named by --log-vkey after checking they extend the last one seen',
  },
  args: options.describe({
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
      const logs = await readLogs(config.logVkey);
      const key = await loadWitnessKey(config.keys, config.witnessKey);
      const state = await new WitnessState(config.witnessState).open();
      const running = await startWitness({ key, logs, state, clock: Date.now }, { host: config.host, port: config.witnessPort }).catch(
        async (error: NodeJS.ErrnoException) => {
          await state.close();
          if (error.code === 'EADDRINUSE' || error.code === 'EACCES')
            throw new ConfigError(
              `--port / MVR_WITNESS_PORT ${config.witnessPort}: cannot listen on ${config.host}:${config.witnessPort} (in use by another process, or not allowed)`,
            );
          throw error;
        },
      );
      io.stderr.write(
        `witness ${key.vkey}\nwitnessing ${logs.map((l) => JSON.stringify(l.origin)).join(', ')}; state in ${config.witnessState}\nlistening on ${running.url} (POST ${running.url}/add-checkpoint)\n`,
      );
      const stop = () => void running.close().then(() => process.exit(0));
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    }),
});

/**
 * The logs to witness, one a line (blank lines and # comments allowed): the log's verifier key,
 * then, after a space, its origin (the rest of the line, spaces included) when that is not the
 * key's name; C2SP says the two only SHOULD match (sum.golang.org's origin is "go.sum database tree").
 */
async function readLogs(file: string): Promise<WitnessedLog[]> {
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new ConfigError(`--log-vkey ${file}: ${error.code === 'ENOENT' ? 'no such file' : error.message}`);
  });
  const logs = text.split('\n').flatMap((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return [];
    const space = line.indexOf(' ');
    const key = parseVkey(space < 0 ? line : line.slice(0, space), `${file}:${i + 1}`);
    const origin = space < 0 ? key.name : line.slice(space + 1).trim();
    return [{ origin, key }];
  });
  if (logs.length === 0) throw new ConfigError(`--log-vkey ${file}: no verifier key in the file`);
  const origins = logs.map((l) => l.origin);
  const twice = origins.find((o, i) => origins.indexOf(o) !== i);
  if (twice !== undefined) throw new ConfigError(`--log-vkey ${file}: the origin "${twice}" is on two lines (give a log one key)`);
  return logs;
}
