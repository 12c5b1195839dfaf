import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { isAbsolute, relative } from 'node:path';
import fg from 'fast-glob';
import type { AuditProblem } from '../core/errors/errors.ts';
import { jsonErrorLocation } from './json-location.ts';
import { forEachLine, type LineRun, lineRuns } from './lines.ts';

/** An audit of a `.json` file, parsed, with where it came from (`file`, or `file[i]` in an array). */
export interface AuditValue {
  source: string;
  value: unknown;
}

/** One audit as read: a JSONL line's text or a `.json` file's parsed value, with where it came from. */
export type AuditItem = { source: string; text: string } | AuditValue;

/** Lines a run when only reading (the build's own runs are its batch size). */
const LINES_PER_RUN = 1000;

/** Bytes read at a time from a JSONL file. */
const CHUNK_BYTES = 1 << 16;

/** Lists audit files (`**\/*.json`, `**\/*.jsonl`) in a stable order, so builds are reproducible. */
export async function listAuditFiles(auditsDir: string): Promise<{ path: string; size: number }[]> {
  const paths = await fg(['**/*.json', '**/*.jsonl'], { cwd: auditsDir, absolute: true, onlyFiles: true, dot: false });
  paths.sort();
  return Promise.all(paths.map(async (path) => ({ path, size: (await stat(path)).size })));
}

/** A path as shown in messages: relative to the working directory when inside it. */
export function displayPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}

/**
 * The JSONL file at `path` in runs of `perRun` whole lines, as bytes ({@link lineRuns}): streamed,
 * so a million-line file never sits in memory.
 */
export function readLineRuns(path: string, perRun: number, onBytes: (n: number) => void): AsyncGenerator<LineRun> {
  return lineRuns(createReadStream(path, { highWaterMark: CHUNK_BYTES }), displayPath(path), perRun, onBytes);
}

/**
 * The audits of a `.json` file: one audit, or an array of them. A file that is not JSON is
 * reported through `onProblem` (with its line and column) and gives none; `onBytes` reports
 * progress.
 */
export async function* readJsonFile(
  path: string,
  onProblem: (p: AuditProblem) => void,
  onBytes: (n: number) => void,
): AsyncGenerator<AuditValue> {
  const shown = displayPath(path);
  const text = await readFile(path, 'utf8');
  onBytes(Buffer.byteLength(text));
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    onProblem({
      source: `${shown}${jsonErrorLocation(text, error as Error)}`,
      kind: 'schema',
      message: `invalid JSON: ${(error as Error).message}`,
    });
    return;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) yield { source: `${shown}[${i}]`, value: value[i] };
  } else {
    yield { source: shown, value };
  }
}

/**
 * Every audit of one file, one at a time, numbered as the build numbers them: each line of a
 * JSONL file that is not blank (as text), or each audit of a `.json` file (as a value).
 */
export async function* readAuditFile(
  path: string,
  onProblem: (p: AuditProblem) => void,
  onBytes: (n: number) => void,
): AsyncGenerator<AuditItem> {
  if (!path.endsWith('.jsonl')) {
    yield* readJsonFile(path, onProblem, onBytes);
    return;
  }
  for await (const run of readLineRuns(path, LINES_PER_RUN, onBytes)) {
    const items: AuditItem[] = [];
    forEachLine(run, (text, line) => items.push({ source: `${run.shown}:${line}`, text }));
    yield* items;
  }
}
