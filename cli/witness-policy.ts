import type { TlogPolicy } from '@merchant-verify/verifier';
import { readFileOrUrl } from '../clients/file-or-url.ts';
import { ConfigError, UsageError } from '../core/errors/errors.ts';
import { parseMaxAge } from '../core/rules/max-age.ts';
import { readPolicyFile } from '../witness/policy-file.ts';

// What a verifying command reads to check witnesses: a tlog-policy file and a maximum age.

/** What `--witness-policy` does for a gateway (`mvr serve`, `mvr dev`). */
export const WITNESS_POLICY_SERVED = "tlog-policy file of the log's witnesses: the MCP tools say when the log was last witnessed";

/** The witness options of a verifying command: none without `--policy`; `--max-age` alone is a usage error. */
export async function witnessOptionsOf(args: {
  policy?: unknown;
  'max-age'?: unknown;
}): Promise<{ policy: TlogPolicy; maxAgeMs?: number } | undefined> {
  const file = typeof args.policy === 'string' && args.policy !== '' ? args.policy : undefined;
  const maxAge = typeof args['max-age'] === 'string' ? args['max-age'] : undefined;
  if (!file) {
    if (maxAge !== undefined) throw new UsageError('--max-age applies to the cosignatures a --policy asks for: give --policy FILE too');
    return undefined;
  }
  return { policy: (await readPolicyFile(file, '--policy')).policy, ...(maxAge === undefined ? {} : { maxAgeMs: parseMaxAge(maxAge) }) };
}

/** `--checkpoint FILE`: a checkpoint note of the log the caller saved and trusts, as text; none without the flag. */
export async function trustedCheckpointOf(args: { checkpoint?: unknown }): Promise<{ trustedCheckpoint: string } | undefined> {
  if (typeof args.checkpoint !== 'string' || args.checkpoint === '') return undefined;
  const bytes = await readFileOrUrl(args.checkpoint).catch((error: Error) => {
    throw new ConfigError(`--checkpoint ${args.checkpoint}: ${error.message}`);
  });
  return { trustedCheckpoint: bytes.toString('utf8') };
}
