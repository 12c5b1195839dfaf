/**
 * Shared pieces of the transparency-log tests: the vectors folder, SHA-256 tree hashing, byte
 * encodings, Ed25519 verification by node:crypto, and reference trees (a tiled log in memory, and
 * RFC 6962 roots computed straight from the leaves) to check the tiles against.
 */
import { createPublicKey, hash, verify } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { treeHasher } from '#shared';
import { emptyEdge, TileAppender } from '../../core/tlog/appender.ts';
import { TileTree } from '../../core/tlog/tile-tree.ts';

export const VECTORS = join(import.meta.dirname, '../vectors/tlog');
export const sha256 = (d: Uint8Array) => new Uint8Array(hash('sha256', d, 'buffer'));
export const h = treeHasher(sha256);
export const b64 = (s: string) => new Uint8Array(Buffer.from(s, 'base64'));
export const hex = (s: string) => new Uint8Array(Buffer.from(s, 'hex'));
export const toHex = (b: Uint8Array) => Buffer.from(b).toString('hex');
export const ed25519 = (signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array) =>
  verify(
    null,
    message,
    createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey).toString('base64url') }, format: 'jwk' }),
    signature,
  );

export function cases<T>(dir: string): { file: string; c: T }[] {
  const out: { file: string; c: T }[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.json')) out.push({ file: p.slice(dir.length + 1), c: JSON.parse(readFileSync(p, 'utf8')) as T });
    }
  };
  walk(dir);
  return out.sort((a, b) => a.file.localeCompare(b.file));
}

/** A tiled log of these entries, in memory, as the build writes it. */
export function tiledLog(entries: Uint8Array[]): { tiles: Map<string, Uint8Array>; tree: (size: number) => TileTree } {
  const tiles = new Map<string, Uint8Array>();
  const appender = new TileAppender(h, emptyEdge(), (path, bytes) => tiles.set(path, bytes));
  for (const e of entries) appender.append(e);
  appender.finish();
  return { tiles, tree: (size) => new TileTree(h, size, async (_t, path) => tiles.get(path) ?? Promise.reject(new Error(`no ${path}`))) };
}

/** MTH as RFC 6962 defines it, straight from the leaves: the reference the tiles are checked against. */
export function referenceRoot(leaves: Uint8Array[]): Uint8Array {
  if (leaves.length === 0) return h.empty();
  if (leaves.length === 1) return h.leaf(leaves[0]!);
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return h.node(referenceRoot(leaves.slice(0, k)), referenceRoot(leaves.slice(k)));
}

export function referenceRootOfHashes(hashes: Uint8Array[]): Uint8Array {
  if (hashes.length === 1) return hashes[0]!;
  let k = 1;
  while (k * 2 < hashes.length) k *= 2;
  return h.node(referenceRootOfHashes(hashes.slice(0, k)), referenceRootOfHashes(hashes.slice(k)));
}
