import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { forEachLine, type LineRun, lineRuns } from '../../builder/lines.ts';

async function* chunked(bytes: Uint8Array, cuts: number[]): AsyncGenerator<Buffer> {
  let at = 0;
  for (const cut of [...cuts.map((c) => c % (bytes.length + 1)).sort((a, b) => a - b), bytes.length]) {
    if (cut > at) yield Buffer.from(bytes.subarray(at, cut));
    at = Math.max(at, cut);
  }
}

async function runsOf(text: string, cuts: number[], perRun: number): Promise<{ runs: LineRun[]; bytesSeen: number }> {
  let bytesSeen = 0;
  const runs: LineRun[] = [];
  for await (const run of lineRuns(chunked(Buffer.from(text), cuts), 'a.jsonl', perRun, (n) => (bytesSeen += n))) runs.push(run);
  return { runs, bytesSeen };
}

/** The file's lines as readline (which the build used before) splits them: at "\r\n", "\n" or a lone "\r"; a break at the end starts no line. */
function fileLines(text: string): string[] {
  const lines = text.split(/\r\n|\n|\r/);
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** The lines the build reads, numbered as in the file: blank ones skipped. */
function expectedLines(text: string): [string, number][] {
  return fileLines(text)
    .map((l, i): [string, number] => [l, i + 1])
    .filter(([l]) => l.trim() !== '');
}

// Lines as JSONL holds them: audits with any text, blank and whitespace-only lines; LF, CRLF and
// lone CR endings (short lines and chunks, so that a CR often ends a chunk).
const line = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 30 }).map((s) => JSON.stringify({ domain: s })),
  fc.constantFrom('', '  ', '\t'),
);
const jsonl = fc
  .tuple(fc.array(fc.tuple(line, fc.constantFrom('\n', '\r\n')), { maxLength: 40 }), fc.boolean())
  .map(([lines, endsWithNewline]) => {
    const text = lines.map(([l, end]) => l + end).join('');
    return endsWithNewline || lines.length === 0 ? text : text.replace(/(\r\n|\n|\r)$/, '');
  });

describe('JSONL runs: the main thread cuts bytes, a worker numbers the lines', () => {
  it('gives every line once, numbered as in the file, whatever the chunks and the run size', async () => {
    await fc.assert(
      fc.asyncProperty(jsonl, fc.array(fc.nat(), { maxLength: 12 }), fc.integer({ min: 1, max: 7 }), async (text, cuts, perRun) => {
        const { runs, bytesSeen } = await runsOf(text, cuts, perRun);
        expect(bytesSeen).toBe(Buffer.byteLength(text));
        // The runs are the file's bytes, in order, cut only after a newline.
        expect(Buffer.concat(runs.map((r) => r.bytes)).toString()).toBe(text);
        // Only after a break: a LF, or a CR not followed by a LF.
        runs.slice(0, -1).forEach((r, i) => {
          const last = r.bytes[r.bytes.length - 1];
          expect(last === 10 || (last === 13 && runs[i + 1]!.bytes[0] !== 10)).toBe(true);
        });
        // perRun lines a run (the last may hold fewer), numbered on from the run before.
        for (const r of runs.slice(0, -1)) expect(r.lines).toBe(perRun);
        for (const [i, r] of runs.entries()) expect(r.firstLine).toBe(1 + i * perRun);
        expect(runs.reduce((n, r) => n + r.lines, 0)).toBe(fileLines(text).length);
        const seen: [string, number][] = [];
        for (const run of runs) forEachLine(run, (t, n) => seen.push([t, n]));
        expect(seen).toEqual(expectedLines(text));
      }),
      { numRuns: 500 },
    );
  });

  it('keeps a character whose bytes fall in two chunks, and counts a last line without a newline', async () => {
    const text = '{"domain":"é.example"}\r\n\r\n{"domain":"日本.example"}';
    const cutInside = Buffer.from(text).indexOf(Buffer.from('日')) + 1;
    const { runs } = await runsOf(text, [cutInside, 12], 2);
    expect(runs.map((r) => [r.firstLine, r.lines])).toEqual([
      [1, 2],
      [3, 1],
    ]);
    const seen: [string, number][] = [];
    for (const run of runs) forEachLine(run, (t, n) => seen.push([t, n]));
    expect(seen).toEqual([
      ['{"domain":"é.example"}', 1],
      ['{"domain":"日本.example"}', 3],
    ]);
  });

  it('ends a line at a CR on its own, also when a CR ends a chunk and the next begins with LF', async () => {
    const text = '{"a":1}\r{"b":2}\r\n\r{"c":3}\r';
    const crlf = text.indexOf('\r\n') + 1;
    for (const perRun of [1, 2, 5]) {
      const { runs } = await runsOf(text, [crlf, 8], perRun);
      const seen: [string, number][] = [];
      for (const run of runs) forEachLine(run, (t, n) => seen.push([t, n]));
      expect(seen).toEqual([
        ['{"a":1}', 1],
        ['{"b":2}', 2],
        ['{"c":3}', 4],
      ]);
      expect(runs.reduce((n, r) => n + r.lines, 0)).toBe(4);
    }
  });

  it('gives no run for an empty file, and each run its own memory (transferable to a worker)', async () => {
    expect((await runsOf('', [], 3)).runs).toEqual([]);
    const { runs } = await runsOf('{}\n{}\n{}\n', [1, 4], 1);
    expect(runs).toHaveLength(3);
    for (const r of runs) expect(r.bytes.byteLength).toBe(r.bytes.buffer.byteLength);
  });
});
