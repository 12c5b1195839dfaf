/** The log's text formats: tile paths (c2sp.org/tlog-tiles), signed notes (c2sp.org/signed-note), checkpoints and tlog-proof text. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  decodeBase64,
  encodeBase64,
  formatTlogProof,
  formatVerifierKey,
  noteKeyId,
  openNote,
  parseCheckpoint,
  parseNote,
  parseTlogProof,
  parseVerifierKey,
  treeHasher,
} from '#shared';
import { checkpointTextSchema, logProofTextSchema } from '../../core/schemas/log.ts';
import { bundle, TileAppender, unbundle } from '../../core/tlog/appender.ts';
import { parseTilePath, rightEdge, tileCovered, tilePath, tilesAdded } from '../../core/tlog/tiles.ts';
import { ed25519, sha256, VECTORS } from '../support/tlog.ts';

/** A tree hasher whose every hash is the same 32 zero bytes: for tests of tile paths only. */
const pathsOnly = treeHasher(() => new Uint8Array(32));

describe('tile paths (c2sp.org/tlog-tiles)', () => {
  it('encodes indexes as 3-digit elements, x-prefixed but the last', () => {
    expect(tilePath({ level: 0, index: 1234067, width: 256 })).toBe('tile/0/x001/x234/067');
    expect(tilePath({ level: 2, index: 5, width: 17 })).toBe('tile/2/005.p/17');
    expect(tilePath({ level: 'entries', index: 0, width: 1 })).toBe('tile/entries/000.p/1');
  });
  it('parses exactly what it writes', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.integer({ min: 0, max: 63 }), fc.constant('entries' as const)),
        fc.integer({ min: 0, max: 2 ** 40 }),
        fc.integer({ min: 1, max: 256 }),
        (level, index, width) => {
          expect(parseTilePath(tilePath({ level, index, width }))).toEqual({ level, index, width });
        },
      ),
    );
    for (const bad of [
      'tile/0/1',
      'tile/0/x000/001',
      'tile/64/000',
      'tile/0/000.p/256',
      'tile/0/000.p/0',
      'tile/00/000',
      'tile/0/000.p/',
      '../tile/0/000',
      'tile/0/000/',
    ])
      expect(parseTilePath(bad), bad).toBeNull();
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
        // Only the paths matter here: an edge of the right shape with dummy hashes, and a hasher
        // that does no hashing (up to 70,000 SHA-256 appends a run made this the slowest test).
        const edge = {
          size: from,
          levels: rightEdge(from).map((t) => Array.from({ length: t.width }, () => new Uint8Array(32))),
          entries: Array.from({ length: from % 256 }, () => new Uint8Array(32)),
        };
        const appender = new TileAppender(pathsOnly, edge, (path) => written.push(path));
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
    expect(() => parseVerifierKey(sha256, 'example.com/foo+530d903b+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k')).toThrow(
      /does not match/,
    );
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
    expect(text.split('\n').slice(0, 5)).toEqual([
      'c2sp.org/tlog-proof@v1',
      `extra ${encodeBase64(new Uint8Array(32).fill(9))}`,
      'index 7',
      encodeBase64(root),
      encodeBase64(root),
    ]);
    expect(parseTlogProof(text)).toEqual({
      extra: new Uint8Array(32).fill(9),
      index: 7,
      proof: [root, root],
      checkpoint: 'cp\n\n\u2014 a b\n',
    });
    expect(() => parseTlogProof('c2sp.org/tlog-proof@v1\nindex 01\n\n')).toThrow(/index/);
    expect(() => parseTlogProof('c2sp.org/spicy-signature@v1\n')).toThrow(/starts with/);
  });
  it('base64 is strict', () => {
    expect(decodeBase64('AA==')).toEqual(new Uint8Array([0]));
    for (const bad of ['AA', 'AA=', 'A-==', 'AB==']) expect(decodeBase64(bad), bad).toBeNull();
  });
});

describe("the log formats' schemas (the OpenAPI document's) and the verifier's parsers", () => {
  const root = encodeBase64(sha256(new Uint8Array([1])));
  const checkpoint = (size: string) =>
    `example.com/log\n${size}\n${root}\n\n\u2014 example.com/log ${encodeBase64(new Uint8Array(68).fill(1))}\n`;
  const proof = (index: string) =>
    `c2sp.org/tlog-proof@v1\nextra ${encodeBase64(new Uint8Array(32).fill(9))}\nindex ${index}\n${root}\n\n${checkpoint('42')}`;
  const parses = (read: () => unknown) => {
    try {
      read();
      return true;
    } catch {
      return false;
    }
  };
  const pattern = (schema: z.ZodString) => new RegExp(z.toJSONSchema(schema).pattern as string);
  const numbers = [
    '0',
    '7',
    '42',
    '9007199254740991',
    '007',
    '01',
    '-1',
    '+1',
    '1e3',
    '0x10',
    '9007199254740992',
    '99999999999999999',
    ' 7',
    '',
  ];

  it.each(numbers)('agree on the index "%s" of a proof', (index) => {
    const text = proof(index);
    const read = parses(() => parseCheckpoint(parseNote(parseTlogProof(text).checkpoint).text));
    expect(logProofTextSchema.safeParse(text).success).toBe(read);
    // The OpenAPI pattern alone refuses every form the parser refuses but a number over 2^53 - 1.
    if (!/^[1-9][0-9]{15}$/.test(index)) expect(pattern(logProofTextSchema).test(text)).toBe(read);
  });

  it.each(numbers)('agree on the tree size "%s" of a checkpoint', (size) => {
    const text = checkpoint(size);
    const read = parses(() => parseCheckpoint(parseNote(text).text));
    expect(checkpointTextSchema.safeParse(text).success).toBe(read);
    if (!/^[1-9][0-9]{15}$/.test(size)) expect(pattern(checkpointTextSchema).test(text)).toBe(read);
  });

  it('refuse a leading zero, which the parser refuses (the pattern once took any digits)', () => {
    expect(() => parseTlogProof(proof('007'))).toThrow(/index/);
    expect(logProofTextSchema.safeParse(proof('007')).success).toBe(false);
    expect(pattern(logProofTextSchema).test(proof('007'))).toBe(false);
    expect(logProofTextSchema.safeParse(proof('7')).success).toBe(true);
  });
});
