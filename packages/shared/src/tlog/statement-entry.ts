import type { Sha256 } from './merkle.ts';

/** What a build statement's log entry hashes before the statement's bytes (a domain separator from records' entries). */
export const STATEMENT_ENTRY_PREFIX = 'merchant-verify build statement v1\n';

/**
 * The log entry of a build statement: `SHA-256("merchant-verify build statement v1\n" || the
 * statement file's exact bytes)`. Each build appends it after its records, so the checkpoint a
 * build publishes ends with its statement; its leaf is `SHA-256(0x00 || entry)` like any other.
 */
export function statementEntry(sha256: Sha256, statementBytes: Uint8Array): Uint8Array {
  const prefix = new TextEncoder().encode(STATEMENT_ENTRY_PREFIX);
  const message = new Uint8Array(prefix.length + statementBytes.length);
  message.set(prefix);
  message.set(statementBytes, prefix.length);
  return sha256(message);
}
