// JSONL as the build moves it: the main thread cuts a file into runs of whole lines, as bytes,
// and a worker turns each run into numbered lines. Kept apart from inputs.ts (which lists files
// with fast-glob) so that the workers' bundle carries only this.

/** Whole lines of one JSONL file, as bytes: `lines` of them, the first being line `firstLine`. */
export interface LineRun {
  /** The file as named in messages. */
  shown: string;
  firstLine: number;
  lines: number;
  /** UTF-8, in memory of its own (its buffer is transferred to the worker, not copied). */
  bytes: Uint8Array<ArrayBuffer>;
}

/**
 * Calls `each` with every line of a run that is not blank, and its line number. Lines end at
 * "\n", and a "\r" just before it is dropped (JSON Lines: "\r\n" is allowed). The last line of a
 * file may have no "\n".
 */
export function forEachLine(run: LineRun, each: (text: string, line: number) => void): void {
  const text = Buffer.from(run.bytes.buffer, run.bytes.byteOffset, run.bytes.byteLength).toString('utf8');
  let line = run.firstLine, start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const stop = end > start && text.charCodeAt(end - 1) === 13 ? end - 1 : end;
    const one = text.slice(start, stop);
    if (one.trim() !== '') each(one, line);
    line++;
    start = end + 1;
  }
}

/**
 * Cuts a stream of byte chunks into runs of `perRun` whole lines (the last run may be shorter,
 * and its last line may have no "\n"). The main thread only looks for newline bytes, which never
 * occur inside a UTF-8 sequence: it decodes nothing and makes no string per line.
 */
export async function* lineRuns(chunks: AsyncIterable<Buffer>, shown: string, perRun: number, onBytes: (n: number) => void): AsyncGenerator<LineRun> {
  let pieces: Buffer[] = [], size = 0, lines = 0, firstLine = 1;
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
    onBytes(chunk.length);
    let start = 0;
    for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, nl + 1)) {
      if (++lines < perRun) continue;
      pieces.push(chunk.subarray(start, nl + 1));
      size += nl + 1 - start;
      start = nl + 1;
      yield take(0);
    }
    if (start < chunk.length) {
      pieces.push(chunk.subarray(start));
      size += chunk.length - start;
    }
  }
  // What follows the last newline is one more line (a file need not end with "\n").
  if (size > 0) {
    const last = pieces[pieces.length - 1]!;
    yield take(last[last.length - 1] === 10 ? 0 : 1);
  }
}
