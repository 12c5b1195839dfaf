// JSONL as the build moves it: the main thread cuts a file into runs of whole lines, as bytes,
// and a worker turns each run into numbered lines. Kept apart from inputs.ts (which lists files
// with fast-glob) so that the workers' bundle carries only this.
//
// A line ends at "\r\n", "\n" or a "\r" on its own, as Node's readline ends lines (JSON Lines
// asks for "\n"; "\r\n" and old "\r" files are read the same way, with the same line numbers).

/** Whole lines of one JSONL file, as bytes: `lines` of them, the first being line `firstLine`. */
export interface LineRun {
  /** The file as named in messages. */
  shown: string;
  firstLine: number;
  lines: number;
  /** UTF-8, in memory of its own (its buffer is transferred to the worker, not copied). */
  bytes: Uint8Array<ArrayBuffer>;
}

const LF = 10;
const CR = 13;

/** Calls `each` with every line of a run that is not blank, and its line number. The last line of a file may have no line break. */
export function forEachLine(run: LineRun, each: (text: string, line: number) => void): void {
  const text = Buffer.from(run.bytes.buffer, run.bytes.byteOffset, run.bytes.byteLength).toString('utf8');
  const n = text.length;
  // Where the next LF and CR are (n when there is none), each searched again only once passed.
  // "None" as n rather than -1: with -1 V8 ran this loop 30 times slower (2.3 against 0.07 µs a line).
  let line = run.firstLine, start = 0, lf = -1, cr = -1;
  while (start < n) {
    if (lf < start) lf = indexOrEnd(text.indexOf('\n', start), n);
    if (cr < start) cr = indexOrEnd(text.indexOf('\r', start), n);
    let end: number, next: number;
    if (cr < lf) {
      end = cr;
      next = text.charCodeAt(cr + 1) === LF ? cr + 2 : cr + 1;
    } else {
      end = lf;
      next = lf + 1;
    }
    const one = text.slice(start, end);
    if (one.trim() !== '') each(one, line);
    line++;
    start = next;
  }
}

function indexOrEnd(at: number, end: number): number {
  return at < 0 ? end : at;
}

/**
 * Cuts a stream of byte chunks into runs of `perRun` whole lines (the last run may be shorter,
 * and its last line may have no line break). The main thread only looks for CR and LF bytes,
 * which never occur inside a UTF-8 sequence: it decodes nothing and makes no string per line.
 */
export async function* lineRuns(chunks: AsyncIterable<Buffer>, shown: string, perRun: number, onBytes: (n: number) => void): AsyncGenerator<LineRun> {
  let pieces: Buffer[] = [], size = 0, lines = 0, firstLine = 1;
  // The last chunk ended with a CR: whether a LF follows (one break, CR LF) is the next chunk's first byte.
  let pendingCR = false;
  const keep = (piece: Buffer) => {
    if (piece.length === 0) return;
    pieces.push(piece);
    size += piece.length;
  };
  const take = (extra: number): LineRun => {
    const bytes = new Uint8Array(size);
    let at = 0;
    for (const piece of pieces) {
      bytes.set(piece, at);
      at += piece.length;
    }
    const run: LineRun = { shown, firstLine, lines: lines + extra, bytes };
    firstLine += run.lines;
    pieces = [];
    size = 0;
    lines = 0;
    return run;
  };
  for await (const chunk of chunks) {
    if (chunk.length === 0) continue;
    onBytes(chunk.length);
    let start = 0, from = 0;
    if (pendingCR) {
      pendingCR = false;
      // The break ends after this chunk's LF, or (a CR on its own) where the last chunk ended.
      from = chunk[0] === LF ? 1 : 0;
      if (++lines >= perRun) {
        keep(chunk.subarray(0, from));
        start = from;
        yield take(0);
      }
    }
    // As in forEachLine: the next LF and CR, the chunk's length when there is none.
    const n = chunk.length;
    let lf = -1, cr = -1;
    for (;;) {
      if (lf < from) lf = indexOrEnd(chunk.indexOf(LF, from), n);
      if (cr < from) cr = indexOrEnd(chunk.indexOf(CR, from), n);
      let next: number;
      if (cr < lf) {
        if (cr === n - 1) {
          pendingCR = true;
          break;
        }
        next = chunk[cr + 1] === LF ? cr + 2 : cr + 1;
      } else if (lf < n) {
        next = lf + 1;
      } else {
        break;
      }
      from = next;
      if (++lines < perRun) continue;
      keep(chunk.subarray(start, next));
      start = next;
      yield take(0);
    }
    keep(chunk.subarray(start));
  }
  // A CR that ended the file ends its last line.
  if (pendingCR) lines++;
  if (size > 0) {
    const last = pieces[pieces.length - 1]!;
    const endsWithBreak = pendingCR || last[last.length - 1] === LF;
    yield take(endsWithBreak ? 0 : 1);
  }
}
