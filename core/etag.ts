import { createHash } from 'node:crypto';

/** A strong entity tag for exact bytes: SHA-256 in base64url, quoted. */
export function strongEtag(bytes: Uint8Array): string {
  return `"${createHash('sha256').update(bytes).digest('base64url')}"`;
}
