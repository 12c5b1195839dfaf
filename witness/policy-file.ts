import { readFile } from 'node:fs/promises';
import { parsePolicy, type TlogPolicy } from '@merchant-verify/verifier';
import { ConfigError } from '../core/errors/errors.ts';

/**
 * A tlog-policy file, its text and what it says, for every command that takes one (the log's
 * `--witness-policy`, a verifier's `--policy`): a file that cannot be read is INVALID_CONFIG naming
 * the flag, a bad line INVALID_POLICY naming the flag as typed, the file and the line.
 */
export async function readPolicyFile(file: string, flag: string): Promise<{ text: string; policy: TlogPolicy }> {
  const text = await readFile(file, 'utf8').catch((error: Error) => {
    throw new ConfigError(`${flag} ${file} cannot be read: ${error.message}`);
  });
  return { text, policy: parsePolicy(text, `${flag} ${file}`) };
}
