import { decodeBase64url, encodeBase64url } from '../base64url.ts';

// Standard, padded base64 (RFC 4648 section 4), as the C2SP formats use it: the same strict
// codec as base64url, with the other two characters and the padding.

export function encodeBase64(bytes: Uint8Array): string {
  const text = encodeBase64url(bytes).replace(/-/g, '+').replace(/_/g, '/');
  return text + '='.repeat((4 - (text.length % 4)) % 4);
}

/** Decodes padded base64 strictly (one spelling per byte string); null for anything else. */
export function decodeBase64(text: string): Uint8Array | null {
  if (text.length % 4 !== 0 || /[-_]/.test(text)) return null;
  const body = text.replace(/={1,2}$/, '');
  if (body.includes('=')) return null;
  return decodeBase64url(body.replace(/\+/g, '-').replace(/\//g, '_'));
}
