import { createPublicKey, hash, verify } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeBase64, encodeBase64 } from '@merchant-verify/verifier/tlog/base64';
import { bundle, emptyEdge, loadEdge, TileAppender, unbundle } from '../../core/tlog/appender.ts';
import { parseCheckpoint } from '@merchant-verify/verifier/tlog/checkpoint';
import { consistencyProof, inclusionProof, rangeHash, treeHasher, verifyConsistency, verifyInclusion } from '@merchant-verify/verifier/tlog/merkle';
import { formatVerifierKey, noteKeyId, openNote, parseNote, parseVerifierKey } from '@merchant-verify/verifier/tlog/note';
import { formatTlogProof, parseTlogProof } from '@merchant-verify/verifier/tlog/proof-text';
import { TileTree } from '../../core/tlog/tile-tree.ts';
import { parseTilePath, rightEdge, tileCovered, tilePath, tilesAdded } from '../../core/tlog/tiles.ts';

const VECTORS = join(import.meta.dirname, '../vectors/tlog');
const sha256 = (d: Uint8Array) => new Uint8Array(hash('sha256', d, 'buffer'));
const h = treeHasher(sha256);
const b64 = (s: string) => new Uint8Array(Buffer.from(s, 'base64'));
const hex = (s: string) => new Uint8Array(Buffer.from(s, 'hex'));
const toHex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const ed25519 = (signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array) =>
  verify(null, message, createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey).toString('base64url') }, format: 'jwk' }), signature);

function cases<T>(dir: string): { file: string; c: T }[] {
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
function tiledLog(entries: Uint8Array[]): { tiles: Map<string, Uint8Array>; tree: (size: number) => TileTree } {
  const tiles = new Map<string, Uint8Array>();
  const appender = new TileAppender(h, emptyEdge(), (path, bytes) => tiles.set(path, bytes));
  for (const e of entries) appender.append(e);
  appender.finish();
  return { tiles, tree: (size) => new TileTree(h, size, async (_t, path) => tiles.get(path) ?? Promise.reject(new Error(`no ${path}`))) };
}

/** MTH as RFC 6962 defines it, straight from the leaves: the reference the tiles are checked against. */
function referenceRoot(leaves: Uint8Array[]): Uint8Array {
  if (leaves.length === 0) return h.empty();
  if (leaves.length === 1) return h.leaf(leaves[0]!);
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return h.node(referenceRoot(leaves.slice(0, k)), referenceRoot(leaves.slice(k)));
}

const rfc = JSON.parse(readFileSync(join(VECTORS, 'rfc6962-tree.json'), 'utf8')) as { leaves: string[]; roots: string[] };
const leaves = rfc.leaves.map(hex);

describe('RFC 6962 hashing against the reference tree', () => {
  it('gives the published root of every tree of 0 to 8 leaves, from the tiles the appender writes', async () => {
    for (let n = 0; n <= 8; n++) {
      const log = tiledLog(leaves.slice(0, n));
      expect(toHex(await log.tree(n).root()), `size ${n}`).toBe(rfc.roots[n]);
    }
  });
});

describe('inclusion proofs: transparency-dev/merkle test data', () => {
  const all = cases<{ leafIdx: number; treeSize: number; root: string; leafHash: string; proof: string[] | null; desc: string; wantErr: boolean }>(join(VECTORS, 'transparency-dev/inclusion'));
  it('has the data files', () => expect(all.length).toBeGreaterThan(80));
  it.each(all.map(({ file, c }) => [file, c] as const))('%s', (_file, c) => {
    const ok = verifyInclusion(h, c.leafIdx, c.treeSize, b64(c.leafHash), (c.proof ?? []).map(b64), b64(c.root));
    expect(ok).toBe(!c.wantErr);
  });
  it('the proofs we compute are the happy-path proofs of the data', async () => {
    let compared = 0;
    for (const { c } of all.filter(({ c }) => !c.wantErr && c.treeSize > 0 && c.treeSize <= 8 && c.desc === 'happy path')) {
      // The data's trees are the reference tree (its roots say so). A log has the partial tiles
      // of the sizes it reached, so each size is its own log.
      if (toHex(b64(c.root)) !== rfc.roots[c.treeSize]) continue;
      const proof = await tiledLog(leaves.slice(0, c.treeSize)).tree(c.treeSize).inclusion(c.leafIdx);
      compared++;
      expect(proof.map(encodeBase64)).toEqual(c.proof ?? []);
    }
    expect(compared).toBeGreaterThan(3);
  });
});

describe('consistency proofs: transparency-dev/merkle test data', () => {
  const all = cases<{ size1: number; size2: number; root1: string; root2: string; proof: string[] | null; desc: string; wantErr: boolean }>(join(VECTORS, 'transparency-dev/consistency'));
  it('has the data files', () => expect(all.length).toBeGreaterThan(80));
  it.each(all.map(({ file, c }) => [file, c] as const))('%s', (_file, c) => {
    const ok = verifyConsistency(h, c.size1, c.size2, b64(c.root1), b64(c.root2), (c.proof ?? []).map(b64));
    expect(ok).toBe(!c.wantErr);
  });
  it('the proofs we compute are the happy-path proofs of the data', async () => {
    let compared = 0;
    for (const { c } of all.filter(({ c }) => !c.wantErr && c.desc === 'happy path' && c.size2 <= 8)) {
      if (toHex(b64(c.root2)) !== rfc.roots[c.size2]) continue;
      expect((await tiledLog(leaves.slice(0, c.size2)).tree(c.size2).consistency(c.size1)).map(encodeBase64)).toEqual(c.proof ?? []);
      compared++;
    }
    expect(compared).toBeGreaterThan(3);
  });
});

describe('a tiled log across tile levels', () => {
  // 70,000 entries: full and partial tiles at levels 0 and 1, a partial tile at level 2 (the
  // example of c2sp.org/tlog-tiles), grown in four appends as four builds would.
  const entries = Array.from({ length: 70_000 }, (_, i) => sha256(new TextEncoder().encode(`entry ${i}`)));
  const tiles = new Map<string, Uint8Array>();
  const fetch = async (_t: unknown, path: string) => tiles.get(path) ?? Promise.reject(new Error(`no ${path}`));
  const sizes = [0, 1, 300, 65_536, 70_000];
  const roots: Uint8Array[] = [];

  it('appends in steps, never rewriting a tile, and gives the reference root at every size', async () => {
    for (let s = 1; s < sizes.length; s++) {
      const before = new Map(tiles);
      const appender = new TileAppender(h, await loadEdge(h, sizes[s - 1]!, fetch), (path, bytes) => {
        expect(before.has(path), `${path} rewritten`).toBe(false);
        tiles.set(path, bytes);
      });
      for (const e of entries.slice(sizes[s - 1], sizes[s])) appender.append(e);
      appender.finish();
      expect(appender.size).toBe(sizes[s]);
    }
    for (const size of sizes) {
      const root = await new TileTree(h, size, fetch).root();
      expect(toHex(root), `size ${size}`).toBe(toHex(referenceRoot(entries.slice(0, size))));
      roots.push(root);
    }
    // The c2sp.org/tlog-tiles example: 273 full level-0 tiles, a partial one of 112, one full
    // level-1 tile, a partial one of 17, and a partial level-2 tile of 1.
    expect(tiles.has('tile/0/272')).toBe(true);
    expect(tiles.has('tile/0/273.p/112')).toBe(true);
    expect(tiles.has('tile/1/000')).toBe(true);
    expect(tiles.has('tile/1/001.p/17')).toBe(true);
    expect(tiles.has('tile/2/000.p/1')).toBe(true);
    expect(tiles.get('tile/entries/273.p/112')!.length).toBe(112 * 34);
  });

  it('inclusion proofs from the tiles verify, and fail for another index, leaf or size', async () => {
    const tree = new TileTree(h, 70_000, fetch);
    const root = roots[4]!;
    for (const i of [0, 1, 255, 256, 65_535, 65_536, 69_999, 12_345]) {
      const proof = await tree.inclusion(i);
      expect(verifyInclusion(h, i, 70_000, h.leaf(entries[i]!), proof, root)).toBe(true);
      expect(verifyInclusion(h, i ^ 1, 70_000, h.leaf(entries[i]!), proof, root)).toBe(false);
      expect(verifyInclusion(h, i, 70_000, h.leaf(entries[(i + 1) % 70_000]!), proof, root)).toBe(false);
      expect(verifyInclusion(h, i, 70_000, h.leaf(entries[i]!), proof, roots[3]!)).toBe(false);
    }
  });

  it('consistency proofs from the tiles verify between every pair of sizes, and not against a rewritten log', async () => {
    const tree = new TileTree(h, 70_000, fetch);
    for (let a = 1; a < sizes.length; a++) {
      const proof = await tree.consistency(sizes[a]!);
      expect(verifyConsistency(h, sizes[a]!, 70_000, roots[a]!, roots[4]!, proof)).toBe(true);
    }
    // A log that rewrote entry 100 (or dropped it) is not an extension of the tree of 300.
    const rewritten = [...entries];
    rewritten[100] = sha256(new TextEncoder().encode('rewritten'));
    const rogue = tiledLog(rewritten);
    const rogueRoot = await rogue.tree(70_000).root();
    expect(verifyConsistency(h, 300, 70_000, roots[2]!, rogueRoot, await rogue.tree(70_000).consistency(300))).toBe(false);
    const dropped = tiledLog([...entries.slice(0, 100), ...entries.slice(101)]);
    expect(verifyConsistency(h, 300, 69_999, roots[2]!, await dropped.tree(69_999).root(), await dropped.tree(69_999).consistency(300))).toBe(false);
  });

  it('reads a partial tile a log has deleted from the start of its full tile, and reports the partial tile when neither is there', async () => {
    // C2SP lets a log (or a mirror) delete a partial tile once its full tile is there.
    const pruned = new Map([...tiles].filter(([path]) => {
      const m = /^tile\/(\d+)\/(.+)\.p\/\d+$/.exec(path);
      return !(m && tiles.has(`tile/${m[1]}/${m[2]}`));
    }));
    expect(pruned.has('tile/0/001.p/44')).toBe(false);
    const read: string[] = [];
    const tree = new TileTree(h, 300, async (_t, path) => {
      read.push(path);
      return pruned.get(path) ?? Promise.reject(new Error(`no ${path}`));
    });
    expect(toHex(await tree.root())).toBe(toHex(roots[2]!));
    expect(read).toEqual(expect.arrayContaining(['tile/0/001.p/44', 'tile/0/001']));
    const proof = await tree.inclusion(299);
    expect(verifyInclusion(h, 299, 300, h.leaf(entries[299]!), proof, roots[2]!)).toBe(true);
    // A full tile of the wrong length is no stand-in either.
    const short = new TileTree(h, 300, async (_t, path) => (path === 'tile/0/001' ? new Uint8Array(32) : pruned.get(path) ?? Promise.reject(new Error(`no ${path}`))));
    await expect(short.root()).rejects.toThrow('no tile/0/001.p/44');
    // Neither the partial nor the full tile: the partial tile is what is missing.
    const none = new TileTree(h, 70_000, async (_t, path) => (path.startsWith('tile/2/') ? Promise.reject(new Error(`no ${path}`)) : tiles.get(path)!));
    await expect(none.root()).rejects.toThrow('no tile/2/000.p/1');
  });

  it('proofs computed straight from RFC 6962 agree with the tiled ones (properties)', async () => {
    const small = entries.slice(0, 600);
    const leafHashes = small.map((e) => h.leaf(e));
    const direct = rangeHash(h, async (s, e) => referenceRootOfHashes(leafHashes.slice(s, e)));
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 600 }), fc.nat(), fc.nat(), async (size, i, m) => {
        const index = i % size, older = m % (size + 1);
        const log = tiledLog(small.slice(0, size));
        expect((await log.tree(size).inclusion(index)).map(toHex)).toEqual((await inclusionProof(direct, index, size)).map(toHex));
        expect((await log.tree(size).consistency(older)).map(toHex)).toEqual((await consistencyProof(direct, older, size)).map(toHex));
      }),
      { numRuns: 200 },
    );
  });
});

function referenceRootOfHashes(hashes: Uint8Array[]): Uint8Array {
  if (hashes.length === 1) return hashes[0]!;
  let k = 1;
  while (k * 2 < hashes.length) k *= 2;
  return h.node(referenceRootOfHashes(hashes.slice(0, k)), referenceRootOfHashes(hashes.slice(k)));
}

describe('tile paths (c2sp.org/tlog-tiles)', () => {
  it('encodes indexes as 3-digit elements, x-prefixed but the last', () => {
    expect(tilePath({ level: 0, index: 1234067, width: 256 })).toBe('tile/0/x001/x234/067');
    expect(tilePath({ level: 2, index: 5, width: 17 })).toBe('tile/2/005.p/17');
    expect(tilePath({ level: 'entries', index: 0, width: 1 })).toBe('tile/entries/000.p/1');
  });
  it('parses exactly what it writes', () => {
    fc.assert(
      fc.property(fc.oneof(fc.integer({ min: 0, max: 63 }), fc.constant('entries' as const)), fc.integer({ min: 0, max: 2 ** 40 }), fc.integer({ min: 1, max: 256 }), (level, index, width) => {
        expect(parseTilePath(tilePath({ level, index, width }))).toEqual({ level, index, width });
      }),
    );
    for (const bad of ['tile/0/1', 'tile/0/x000/001', 'tile/64/000', 'tile/0/000.p/256', 'tile/0/000.p/0', 'tile/00/000', 'tile/0/000.p/', '../tile/0/000', 'tile/0/000/']) expect(parseTilePath(bad), bad).toBeNull();
  });
  it('the right edge of a tree of 70,000 is the spec example', () => {
    expect(rightEdge(70_000)).toEqual([
      { level: 0, index: 273, width: 112 },
      { level: 1, index: 1, width: 17 },
      { level: 2, index: 0, width: 1 },
    ]);
  });
  it('tilesAdded names exactly the files the appender writes when a log grows', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 70_000 }), fc.integer({ min: 0, max: 70_000 }), (a, b) => {
        const [from, to] = a <= b ? [a, b] : [b, a];
        const written: string[] = [];
        // Only the paths matter here: an edge of the right shape with dummy hashes.
        const edge = { size: from, levels: rightEdge(from).map((t) => Array.from({ length: t.width }, () => new Uint8Array(32))), entries: Array.from({ length: from % 256 }, () => new Uint8Array(32)) };
        const appender = new TileAppender(h, edge, (path) => written.push(path));
        for (let i = from; i < to; i++) appender.append(new Uint8Array(32));
        appender.finish();
        expect(tilesAdded(from, to).sort()).toEqual(written.sort());
      }),
      { numRuns: 60 },
    );
  });

  it('a tile is covered by exactly the log sizes that commit to all of it', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 70_000 }), fc.integer({ min: 1, max: 70_000 }), (from, grow) => {
        const to = from + grow;
        for (const path of tilesAdded(from, to)) {
          const tile = parseTilePath(path)!;
          expect(tileCovered(tile, to), `${path} at ${to}`).toBe(true);
          expect(tileCovered(tile, from), `${path} at ${from}`).toBe(false);
        }
      }),
      { numRuns: 200 },
    );
    expect(tileCovered({ level: 1, index: 0, width: 1 }, 255)).toBe(false);
    expect(tileCovered({ level: 1, index: 0, width: 1 }, 256)).toBe(true);
    expect(tileCovered({ level: 63, index: 0, width: 1 }, Number.MAX_SAFE_INTEGER)).toBe(false);
  });

  it('bundles round-trip', () => {
    const es = [new Uint8Array([1, 2]), new Uint8Array(0), new Uint8Array(300).fill(7)];
    expect(unbundle(bundle(es)).map((e) => [...e])).toEqual(es.map((e) => [...e]));
    expect(() => unbundle(new Uint8Array([0, 5, 1]))).toThrow(/inside an entry/);
  });
});

describe('signed notes (c2sp.org/signed-note)', () => {
  const example = JSON.parse(readFileSync(join(VECTORS, 'signed-note.json'), 'utf8')) as { vkey: string; note: string; text: string };
  const key = parseVerifierKey(sha256, example.vkey);

  it('reads the specification example key and opens its note', () => {
    expect(key.name).toBe('example.com/foo');
    expect(key.id).toBe(0x530d903a);
    expect(noteKeyId(sha256, key.name, key.publicKey)).toBe(0x530d903a);
    expect(formatVerifierKey(key)).toBe(example.vkey);
    expect(openNote(example.note, [key], ed25519)).toBe(example.text);
  });

  it('ignores signatures by unknown keys, needs one by a known key, and refuses a bad one', () => {
    const other = `\u2014 other.example/key ${encodeBase64(new Uint8Array(68).fill(1))}\n`;
    expect(openNote(example.note + other, [key], ed25519)).toBe(example.text);
    // Same name, other ID: unknown, ignored; the note then has no known signature.
    const sameName = example.note.replace(/Uw2QOk/, 'AAAAAA');
    expect(() => openNote(sameName, [key], ed25519)).toThrow(/not signed by example\.com\/foo\+530d903a/);
    const tampered = example.note.replace('example message', 'exAmple message');
    expect(() => openNote(tampered, [key], ed25519)).toThrow(/does not verify/);
  });

  it('refuses malformed notes and keys, naming what is wrong', () => {
    expect(() => parseNote('no blank line\n\u2014 a b\n')).toThrow(/blank line/);
    expect(() => parseNote('text\n\nnot a signature\n')).toThrow(/not a signature line/);
    expect(() => parseNote('te\tst\n\n\u2014 a AAAAAAA=\n')).toThrow(/control character/);
    expect(() => parseVerifierKey(sha256, 'example.com/foo+530d903b+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k')).toThrow(/does not match/);
    expect(() => parseVerifierKey(sha256, 'example.com/foo+530d903a')).toThrow(/three parts/);
    // A key whose base64 holds "+" (most do) is still three parts: name, ID, key.
    for (let i = 0; i < 20; i++) {
      const publicKey = sha256(new Uint8Array([i]));
      const k = { name: 'example.com/log', id: noteKeyId(sha256, 'example.com/log', publicKey), publicKey };
      expect(parseVerifierKey(sha256, formatVerifierKey(k))).toEqual(k);
    }
  });
});

describe('checkpoints and tlog-proof text', () => {
  it('parse what they format, and refuse the malformed', () => {
    const root = sha256(new Uint8Array([1]));
    const cp = parseCheckpoint(`example.com/log\n42\n${encodeBase64(root)}\n`);
    expect(cp).toEqual({ origin: 'example.com/log', size: 42, root });
    expect(() => parseCheckpoint(`example.com/log\n042\n${encodeBase64(root)}\n`)).toThrow(/leading zeros/);
    expect(() => parseCheckpoint('example.com/log\n1\nAAAA\n')).toThrow(/32 bytes/);
    const text = formatTlogProof({ extra: new Uint8Array(32).fill(9), index: 7, proof: [root, root], checkpoint: 'cp\n\n\u2014 a b\n' });
    expect(text.split('\n').slice(0, 5)).toEqual(['c2sp.org/tlog-proof@v1', `extra ${encodeBase64(new Uint8Array(32).fill(9))}`, 'index 7', encodeBase64(root), encodeBase64(root)]);
    expect(parseTlogProof(text)).toEqual({ extra: new Uint8Array(32).fill(9), index: 7, proof: [root, root], checkpoint: 'cp\n\n\u2014 a b\n' });
    expect(() => parseTlogProof('c2sp.org/tlog-proof@v1\nindex 01\n\n')).toThrow(/index/);
    expect(() => parseTlogProof('c2sp.org/spicy-signature@v1\n')).toThrow(/starts with/);
  });
  it('base64 is strict', () => {
    expect(decodeBase64('AA==')).toEqual(new Uint8Array([0]));
    for (const bad of ['AA', 'AA=', 'A-==', 'AB==']) expect(decodeBase64(bad), bad).toBeNull();
  });
});
