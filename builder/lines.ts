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

/**
 * Finds the line breaks of one buffer in order: where the next line's text ends (`end`) and the
 * line after it starts (`next`). Each of LF and CR is searched for again only once passed; "none
 * left" is the buffer's length, not -1 (with -1, V8 ran this kind of loop 30 times slower).
 */
class Breaks {
  private lf = -1;
  private cr = -1;
  end = 0;
  next = 0;
  constructor(private readonly bytes: Buffer) {}

  /**
   * The break at or after `from`: true with `end` and `next` set, or false when there is none.
   * A CR that is the buffer's last byte is a break only if `crAtEndBreaks` (at the end of a file
   * or of a run); at the end of a chunk its LF may be the next chunk's first byte.
   */
  find(from: number, crAtEndBreaks: boolean): boolean {
    const b = this.bytes,
      n = b.length;
    if (this.lf < from) this.lf = orEnd(b.indexOf(LF, from), n);
    if (this.cr < from) this.cr = orEnd(b.indexOf(CR, from), n);
    const cr = this.cr;
    if (cr < this.lf) {
      if (cr === n - 1 && !crAtEndBreaks) return false;
      this.end = cr;
      this.next = b[cr + 1] === LF ? cr + 2 : cr + 1;
      return true;
    }
    if (this.lf === n) return false;
    this.end = this.lf;
    this.next = this.lf + 1;
    return true;
  }
}

function orEnd(at: number, end: number): number {
  return at < 0 ? end : at;
}

/** Calls `each` with every line of a run that is not blank, and its line number. The last line of a file may have no line break. */
export function forEachLine(run: LineRun, each: (text: string, line: number) => void): void {
  const bytes = Buffer.from(run.bytes.buffer, run.bytes.byteOffset, run.bytes.byteLength);
  const breaks = new Breaks(bytes);
  let line = run.firstLine,
    start = 0;
  while (start < bytes.length) {
    // A run ends after a break or at the end of its file: a CR that ends it is a break.
    const found = breaks.find(start, true);
    const end = found ? breaks.end : bytes.length;
    const one = bytes.toString('utf8', start, end);
    if (one.trim() !== '') each(one, line);
    line++;
    start = found ? breaks.next : bytes.length;
  }
}

/**
 * Cuts a stream of byte chunks into runs of `perRun` whole lines (the last run may be shorter,
 * and its last line may have no line break). The main thread only looks for CR and LF bytes,
 * which never occur inside a UTF-8 sequence: it decodes nothing and makes no string per line.
 */
export async function* lineRuns(
  chunks: AsyncIterable<Buffer>,
  shown: string,
  perRun: number,
  onBytes: (n: number) => void,
): AsyncGenerator<LineRun> {
  let pieces: Buffer[] = [],
    size = 0,
    lines = 0,
    firstLine = 1;
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
    let start = 0,
      from = 0;
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
    const breaks = new Breaks(chunk);
    while (breaks.find(from, false)) {
      from = breaks.next;
      if (++lines < perRun) continue;
      keep(chunk.subarray(start, from));
      start = from;
      yield take(0);
    }
    // No break left, or a CR as the chunk's last byte (decided by the next chunk).
    pendingCR = chunk[chunk.length - 1] === CR && from < chunk.length;
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
