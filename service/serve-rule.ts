import { type ErrorCode, isMvrError, RecordUnavailableError } from '../core/errors.ts';
import type { CheckKeys } from '../core/key-trust.ts';
import { recordSchema } from '../core/record.ts';
import { verifyRecordNode } from '../core/signing.ts';
import { trustHint } from './build-maps.ts';

/**
 * The serve rule: a stored record is served only when, in order, it parses, is the record of
 * the domain asked for, has the record's shape, and its signature verifies against the trusted keys
 * of the key set this deployment publishes. An unsigned record passes only when the gateway was told
 * to serve unsigned builds. Throws UNAVAILABLE naming the step that failed.
 */
export function checkServeRule(domain: string, bytes: Buffer, keys: CheckKeys): void {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new RecordUnavailableError(`record for ${domain} is corrupt (not JSON)`);
  }
  if ((value as { domain?: unknown } | null)?.domain !== domain) {
    throw new RecordUnavailableError(`record file for ${domain} holds another domain`);
  }
  const shape = recordSchema.safeParse(value);
  if (!shape.success) {
    const issue = shape.error.issues[0]!;
    throw new RecordUnavailableError(`record for ${domain} does not match the schema (${issue.path.join('.')}: ${issue.message})`);
  }
  const verdict = verifyRecordNode(value, keys.keySet);
  if (verdict.valid) return;
  if (verdict.code === 'UNSIGNED' && keys.unsigned) return;
  throw new RecordUnavailableError(`record for ${domain} failed verification: ${verdict.code} (${verdict.message})${trustHint(verdict)}`);
}

/** The read, its outcome told to `onRead` on the way. */
export function observed(read: Promise<Buffer | null>, onRead: ((outcome: StoreReadOutcome) => void) | undefined): Promise<Buffer | null> {
  if (!onRead) return read;
  return read.then(
    (bytes) => {
      onRead(bytes === null ? 'missing' : 'found');
      return bytes;
    },
    (error: unknown) => {
      onRead(isMvrError(error) ? error.code : 'INTERNAL');
      throw error;
    },
  );
}

/** What one read from the store came to: a record, no file or object though the map lists it, or the error's code. */
export type StoreReadOutcome = 'found' | 'missing' | ErrorCode;
