/** RFC 6962 Merkle trees: hashing, inclusion and consistency proofs against published vectors, and a tiled log across tile levels. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { consistencyProof, encodeBase64, inclusionProof, rangeHash, verifyConsistency, verifyInclusion } from '#shared';
import { loadEdge, TileAppender } from '../../core/tlog/appender.ts';
import { TileTree } from '../../core/tlog/tile-tree.ts';
import { b64, cases, h, hex, referenceRoot, referenceRootOfHashes, sha256, tiledLog, toHex, VECTORS } from '../support/tlog.ts';

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
  const all = cases<{
    leafIdx: number;
    treeSize: number;
    root: string;
    leafHash: string;
    proof: string[] | null;
    desc: string;
    wantErr: boolean;
  }>(join(VECTORS, 'transparency-dev/inclusion'));
  it('has the data files', () => expect(all.length).toBeGreaterThan(80));
  it.each(all.map(({ file, c }) => [file, c] as const))('%s', (_file, c) => {
    const ok = verifyInclusion(
      h,
      { size: c.treeSize, root: b64(c.root) },
      { index: c.leafIdx, hash: b64(c.leafHash) },
      (c.proof ?? []).map(b64),
    );
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
  const all = cases<{ size1: number; size2: number; root1: string; root2: string; proof: string[] | null; desc: string; wantErr: boolean }>(
    join(VECTORS, 'transparency-dev/consistency'),
  );
  it('has the data files', () => expect(all.length).toBeGreaterThan(80));
  it.each(all.map(({ file, c }) => [file, c] as const))('%s', (_file, c) => {
    const ok = verifyConsistency(h, { size: c.size1, root: b64(c.root1) }, { size: c.size2, root: b64(c.root2) }, (c.proof ?? []).map(b64));
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

describe('hashes and proofs by name (as Go x/mod tlog: Hash, RecordProof, TreeProof)', () => {
  it('a leaf and a tree cannot trade places: the compiler refuses it (tsc checks these lines)', () => {
    const leaf = { index: 0, hash: h.leaf(new Uint8Array([1])) };
    const tree = { size: 1, root: leaf.hash };
    expect(verifyInclusion(h, tree, leaf, [])).toBe(true);
    // @ts-expect-error a leaf where the tree goes, and the tree where the leaf goes
    expect(verifyInclusion(h, leaf, tree, [])).toBe(false);
    // @ts-expect-error the older tree's root and size are not two loose arguments
    expect(verifyConsistency(h, 1, 1, tree.root, tree.root, [])).toBe(false);
    expect(verifyConsistency(h, tree, tree, [])).toBe(true);
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
      expect(verifyInclusion(h, { size: 70_000, root }, { index: i, hash: h.leaf(entries[i]!) }, proof)).toBe(true);
      expect(verifyInclusion(h, { size: 70_000, root }, { index: i ^ 1, hash: h.leaf(entries[i]!) }, proof)).toBe(false);
      expect(verifyInclusion(h, { size: 70_000, root }, { index: i, hash: h.leaf(entries[(i + 1) % 70_000]!) }, proof)).toBe(false);
      expect(verifyInclusion(h, { size: 70_000, root: roots[3]! }, { index: i, hash: h.leaf(entries[i]!) }, proof)).toBe(false);
    }
  });

  it('consistency proofs from the tiles verify between every pair of sizes, and not against a rewritten log', async () => {
    const tree = new TileTree(h, 70_000, fetch);
    for (let a = 1; a < sizes.length; a++) {
      const proof = await tree.consistency(sizes[a]!);
      expect(verifyConsistency(h, { size: sizes[a]!, root: roots[a]! }, { size: 70_000, root: roots[4]! }, proof)).toBe(true);
    }
    // A log that rewrote entry 100 (or dropped it) is not an extension of the tree of 300.
    const rewritten = [...entries];
    rewritten[100] = sha256(new TextEncoder().encode('rewritten'));
    const rogue = tiledLog(rewritten);
    const rogueRoot = await rogue.tree(70_000).root();
    expect(
      verifyConsistency(h, { size: 300, root: roots[2]! }, { size: 70_000, root: rogueRoot }, await rogue.tree(70_000).consistency(300)),
    ).toBe(false);
    const dropped = tiledLog([...entries.slice(0, 100), ...entries.slice(101)]);
    expect(
      verifyConsistency(
        h,
        { size: 300, root: roots[2]! },
        { size: 69_999, root: await dropped.tree(69_999).root() },
        await dropped.tree(69_999).consistency(300),
      ),
    ).toBe(false);
  });

  it('reads a partial tile a log has deleted from the start of its full tile, and reports the partial tile when neither is there', async () => {
    // C2SP lets a log (or a mirror) delete a partial tile once its full tile is there.
    const pruned = new Map(
      [...tiles].filter(([path]) => {
        const m = /^tile\/(\d+)\/(.+)\.p\/\d+$/.exec(path);
        return !(m && tiles.has(`tile/${m[1]}/${m[2]}`));
      }),
    );
    expect(pruned.has('tile/0/001.p/44')).toBe(false);
    const read: string[] = [];
    const tree = new TileTree(h, 300, async (_t, path) => {
      read.push(path);
      return pruned.get(path) ?? Promise.reject(new Error(`no ${path}`));
    });
    expect(toHex(await tree.root())).toBe(toHex(roots[2]!));
    expect(read).toEqual(expect.arrayContaining(['tile/0/001.p/44', 'tile/0/001']));
    const proof = await tree.inclusion(299);
    expect(verifyInclusion(h, { size: 300, root: roots[2]! }, { index: 299, hash: h.leaf(entries[299]!) }, proof)).toBe(true);
    // A full tile of the wrong length is no stand-in either.
    const short = new TileTree(h, 300, async (_t, path) =>
      path === 'tile/0/001' ? new Uint8Array(32) : (pruned.get(path) ?? Promise.reject(new Error(`no ${path}`))),
    );
    await expect(short.root()).rejects.toThrow('no tile/0/001.p/44');
    // Neither the partial nor the full tile: the partial tile is what is missing.
    const none = new TileTree(h, 70_000, async (_t, path) =>
      path.startsWith('tile/2/') ? Promise.reject(new Error(`no ${path}`)) : tiles.get(path)!,
    );
    await expect(none.root()).rejects.toThrow('no tile/2/000.p/1');
  });

  it('proofs computed straight from RFC 6962 agree with the tiled ones (properties)', async () => {
    const small = entries.slice(0, 600);
    const leafHashes = small.map((e) => h.leaf(e));
    const direct = rangeHash(h, async (s, e) => referenceRootOfHashes(leafHashes.slice(s, e)));
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 600 }), fc.nat(), fc.nat(), async (size, i, m) => {
        const index = i % size,
          older = m % (size + 1);
        const log = tiledLog(small.slice(0, size));
        expect((await log.tree(size).inclusion(index)).map(toHex)).toEqual((await inclusionProof(direct, index, size)).map(toHex));
        expect((await log.tree(size).consistency(older)).map(toHex)).toEqual((await consistencyProof(direct, older, size)).map(toHex));
      }),
      { numRuns: 200 },
    );
  });
});
