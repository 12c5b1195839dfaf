import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { canonicalBytes, canonicalJson } from '#shared';
import { CanonicalizationError, MvrError } from '../../core/errors/errors.ts';
import { thrown } from '../support/thrown.ts';

interface Rfc8785File {
  examples: { name: string; input_json: string; canonical: string; utf8_hex?: string; expected_value_order?: string[] }[];
  number_serialization: { ieee754: string; json: string | null; comment?: string }[];
}

const rfc8785 = JSON.parse(readFileSync(new URL('../vectors/rfc8785.json', import.meta.url), 'utf8')) as Rfc8785File;

/** IEEE 754 binary64, given as 16 big-endian hex digits, to a JS number. */
function doubleFromHex(h: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${h}`));
  return view.getFloat64(0);
}

function expectRefused(value: unknown, path: string): void {
  const error = thrown(() => canonicalJson(value));
  expect(error).toBeInstanceOf(MvrError);
  expect(error).toBeInstanceOf(CanonicalizationError);
  expect(error).toMatchObject({ code: 'NOT_CANONICALIZABLE', path });
  // canonicalBytes refuses the same way: nothing gets signed that canonicalJson would refuse.
  expect(thrown(() => canonicalBytes(value))).toMatchObject({ code: 'NOT_CANONICALIZABLE', path });
}

describe('RFC 8785 examples (test/vectors/rfc8785.json)', () => {
  it.each(rfc8785.examples)('$name', (example) => {
    const value: unknown = JSON.parse(example.input_json);
    const text = canonicalJson(value);
    expect(text).toBe(example.canonical);
    if (example.utf8_hex) {
      expect(Buffer.from(canonicalBytes(value)).toString('hex')).toBe(example.utf8_hex);
    }
    if (example.expected_value_order) {
      // Read the order from the text: JS objects list integer-like keys ("1") first, whatever the text says.
      const positions = example.expected_value_order.map((v) => text.indexOf(`:${JSON.stringify(v)}`));
      expect(positions.every((p) => p > 0)).toBe(true);
      expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    }
  });

  it('canonical text is idempotent on the examples', () => {
    for (const example of rfc8785.examples) {
      expect(canonicalJson(JSON.parse(example.canonical))).toBe(example.canonical);
    }
  });
});

describe('RFC 8785 Appendix B number serialization', () => {
  it('has every row of the table (26)', () => {
    expect(rfc8785.number_serialization).toHaveLength(26);
  });

  const finite = rfc8785.number_serialization.filter((row) => row.json !== null);
  const refused = rfc8785.number_serialization.filter((row) => row.json === null);

  it.each(finite)('0x$ieee754 -> $json', (row) => {
    const n = doubleFromHex(row.ieee754);
    expect(canonicalJson(n)).toBe(row.json);
    expect(canonicalJson([n])).toBe(`[${row.json}]`);
    expect(canonicalJson({ n })).toBe(`{"n":${row.json}}`);
  });

  it.each(refused)('0x$ieee754 ($comment) is refused', (row) => {
    const n = doubleFromHex(row.ieee754);
    expect(Number.isFinite(n)).toBe(false);
    expectRefused(n, '$');
    expectRefused({ evidence: { coverage: n } }, '$.evidence.coverage');
  });

  it('minus zero really is minus zero before serialization', () => {
    expect(Object.is(doubleFromHex('8000000000000000'), -0)).toBe(true);
  });
});

describe('canonicalJson basics', () => {
  it('sorts members recursively, keeps array order, no whitespace', () => {
    expect(canonicalJson({ b: 1, a: [true, null, { d: 'x', c: 'y' }] })).toBe('{"a":[true,null,{"c":"y","d":"x"}],"b":1}');
  });

  it('serializes primitives at the top level', () => {
    expect(canonicalJson(null)).toBe('null');
    expect(canonicalJson(true)).toBe('true');
    expect(canonicalJson('a"b\\c\u0001')).toBe('"a\\"b\\\\c\\u0001"');
    expect(canonicalJson([])).toBe('[]');
    expect(canonicalJson({})).toBe('{}');
  });

  it('accepts null-prototype objects and shared (non-cyclic) references', () => {
    const bare = Object.create(null) as Record<string, unknown>;
    bare.z = 1;
    bare.a = 2;
    expect(canonicalJson(bare)).toBe('{"a":2,"z":1}');
    const shared = { v: 1 };
    expect(canonicalJson({ x: shared, y: [shared, shared] })).toBe('{"x":{"v":1},"y":[{"v":1},{"v":1}]}');
  });

  it('keeps a valid surrogate pair and serializes it as is', () => {
    expect(canonicalJson({ e: '\ud83d\ude00' })).toBe('{"e":"\ud83d\ude00"}');
    expect(canonicalBytes('\ud83d\ude00')).toEqual(new Uint8Array([0x22, 0xf0, 0x9f, 0x98, 0x80, 0x22]));
  });

  it('canonicalBytes is the UTF-8 encoding of canonicalJson', () => {
    const value = { '€': 'é', a: [1.5, -0, 1e21] };
    expect(Buffer.from(canonicalBytes(value)).toString('utf8')).toBe(canonicalJson(value));
    expect(canonicalJson(value)).toBe('{"a":[1.5,0,1e+21],"€":"é"}');
  });
});

describe('canonicalJson refuses what RFC 8785 cannot express (NOT_CANONICALIZABLE with the path)', () => {
  class Point {
    constructor(
      public x: number,
      public y: number,
    ) {}
  }
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;
  const deepCycle: { evidence: { blockers: unknown[] } } = { evidence: { blockers: [] } };
  deepCycle.evidence.blockers.push(deepCycle.evidence);
  const cyclicArray: unknown[] = [1];
  cyclicArray.push(cyclicArray);

  const cases: [string, unknown, string][] = [
    ['NaN', { evidence: { coverage: NaN } }, '$.evidence.coverage'],
    ['Infinity', { evidence: { coverage: Infinity } }, '$.evidence.coverage'],
    ['-Infinity', { score: -Infinity }, '$.score'],
    ['NaN at the top', NaN, '$'],
    ['an undefined member', { a: 1, evidence: { ok: true, coverage: undefined } }, '$.evidence.coverage'],
    ['undefined in an array', { flags: ['a', undefined, 'b'] }, '$.flags[1]'],
    ['undefined at the top', undefined, '$'],
    // biome-ignore lint/suspicious/noSparseArray: the hole is the input under test
    ['a sparse array hole', { list: [1, , 3] }, '$.list[1]'],
    ['a bigint', { n: 10n }, '$.n'],
    ['a function', { f: () => 1 }, '$.f'],
    ['a function at the top', function named() {}, '$'],
    ['a symbol value', { s: Symbol('x') }, '$.s'],
    ['a Date', { first_seen: new Date(0) }, '$.first_seen'],
    ['a Map', { m: new Map([['a', 1]]) }, '$.m'],
    ['a Set', { s: new Set([1]) }, '$.s'],
    ['a class instance', { p: new Point(1, 2) }, '$.p'],
    ['a boxed Number', { n: new Number(1) }, '$.n'],
    ['a boxed String', { s: new String('x') }, '$.s'],
    ['a Uint8Array', { b: new Uint8Array(2) }, '$.b'],
    ['a RegExp', { r: /x/ }, '$.r'],
    ['an object with a custom prototype', { o: Object.create({ inherited: 1 }) }, '$.o'],
    ['an object with toJSON', { a: { toJSON: () => 1 } }, '$.a.toJSON'],
    ['a lone high surrogate', { s: 'a\ud800b' }, '$.s'],
    ['a lone low surrogate', { s: '\udead' }, '$.s'],
    ['a high surrogate at the end', ['ok', 'x\ud83d'], '$[1]'],
    ['swapped surrogates', { s: '\ude00\ud83d' }, '$.s'],
    ['a cycle through an object', cyclic, '$.self'],
    ['a cycle through an array', deepCycle, '$.evidence.blockers[0]'],
    ['an array containing itself', cyclicArray, '$[1]'],
  ];

  it.each(cases)('%s', (_name, value, path) => {
    expectRefused(value, path);
  });

  // Member names are checked too, not only values.
  it('a lone surrogate in a member name', () => {
    const value: Record<string, unknown> = {};
    value['\ud800'] = 1;
    const error = thrown(() => canonicalJson({ evidence: value }));
    expect(error).toBeInstanceOf(CanonicalizationError);
    expect(error).toMatchObject({ code: 'NOT_CANONICALIZABLE' });
    expect((error as CanonicalizationError).path.startsWith('$.evidence')).toBe(true);
  });

  it('a lone surrogate in a member name is at least refused (not silently serialized)', () => {
    const value: Record<string, unknown> = {};
    value['\ud800'] = 1;
    expect(() => canonicalJson(value)).toThrow();
  });
});
