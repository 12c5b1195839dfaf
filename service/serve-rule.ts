import { entryMismatch } from '#shared';
import { sha256 } from '../core/crypto/hash.ts';
import { verifyRecordNode } from '../core/crypto/signing.ts';
import { type ErrorCode, isMvrError, RecordNotInMapError, RecordUnavailableError } from '../core/errors/errors.ts';
import type { CheckKeys } from '../core/rules/key-trust.ts';
import { recordSchema } from '../core/rules/record.ts';
import { trustHint } from './build-maps.ts';

/**
 * The serve rule: a stored record is served only when, in order, it parses, is the record of
 * the domain asked for, has the record's shape, its signature verifies against the trusted keys of
 * the key set this deployment publishes (an unsigned record passes only when the gateway was told
 * to serve unsigned builds), and it is what its build's map commits to (in a v2 build: its exact
 * bytes hash to its `entry`'s record_hash, its verdict is the entry's; a v1 build's map names no
 * record, `entry` null). Throws UNAVAILABLE naming the step that failed (RecordNotInMapError for the map's).
 */
export function checkServeRule(domain: string, bytes: Buffer, keys: CheckKeys, entry: Uint8Array | null): void {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new RecordUnavailableError(`record for ${domain} is corrupt (not JSON)`);
  }
  checkParsedServeRule(domain, bytes, value, keys, entry);
}

/** The serve rule's steps after the first, on `value`, what the stored `bytes` parse to: for a caller that parsed them already (a mirror's worker). */
export function checkParsedServeRule(domain: string, bytes: Uint8Array, value: unknown, keys: CheckKeys, entry: Uint8Array | null): void {
  if ((value as { domain?: unknown } | null)?.domain !== domain) {
    throw new RecordUnavailableError(`record file for ${domain} holds another domain`);
  }
  const shape = recordSchema.safeParse(value);
  if (!shape.success) {
    const issue = shape.error.issues[0]!;
    throw new RecordUnavailableError(`record for ${domain} does not match the schema (${issue.path.join('.')}: ${issue.message})`);
  }
  const verdict = verifyRecordNode(value, keys.keySet);
  if (!verdict.valid && !(verdict.code === 'UNSIGNED' && keys.unsigned))
    throw new RecordUnavailableError(`record for ${domain} failed verification: ${verdict.code} (${verdict.message})${trustHint(verdict)}`);
  // Last: a validly signed record of the same domain from another build (same key) passes every step above; only the
  // map tells it apart. Its exact bytes are hashed: the same record written another way is not the one committed either.
  const notInMap = entry && entryMismatch(sha256, entry, value, bytes);
  if (notInMap) throw new RecordNotInMapError(`record for ${domain} is not what its build's map committed: ${notInMap}`);
}

/** Why a stored record was refused: a step of the serve rule, or not being what its build's map commits to. */
export type RejectionKind = 'serve_rule' | 'not_in_map';

/** The kind of a refusal the serve rule threw. */
export function rejectionKind(error: RecordUnavailableError): RejectionKind {
  return error instanceof RecordNotInMapError ? 'not_in_map' : 'serve_rule';
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
