/**
 * Writes `text` into `out` at `at`, one byte a character (Latin-1, as Buffer#write(text, at,
 * 'latin1') does, keeping the low byte of a wider character), and returns the offset after it.
 * For the short texts an answer is made of (a domain, an entity tag), a loop here costs less
 * than Buffer#write's call out of JavaScript. `out` must have room.
 */
export function writeLatin1(out: Uint8Array, at: number, text: string): number {
  for (let i = 0; i < text.length; i++) out[at + i] = text.charCodeAt(i);
  return at + text.length;
}
