import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { relative, isAbsolute } from 'node:path';
import { createInterface } from 'node:readline';
import fg from 'fast-glob';
import type { AuditProblem } from '../../core/errors.ts';
import { jsonErrorLocation } from './json-location.ts';

/** One audit as read: raw JSON text (parsed in a worker) or an already-parsed value, with where it came from. */
export type AuditItem = { source: string; text: string } | { source: string; value: unknown };

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
 * Reads every audit of one file. JSONL is streamed line by line (a million-line file never sits
 * in memory); a `.json` file holds one audit or an array of them. File-level problems (bad JSON,
 * wrong top-level type) are reported through `onProblem`; `onBytes` reports progress.
 */
export async function* readAuditFile(
  path: string,
  onProblem: (p: AuditProblem) => void,
  onBytes: (n: number) => void,
): AsyncGenerator<AuditItem> {
  const shown = displayPath(path);
  if (path.endsWith('.jsonl')) {
    const lines = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
    let line = 0;
    for await (const text of lines) {
      line++;
      onBytes(Buffer.byteLength(text) + 1);
      if (text.trim() === '') continue;
      yield { source: `${shown}:${line}`, text };
    }
    return;
  }
  const text = await readFile(path, 'utf8');
  onBytes(Buffer.byteLength(text));
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    onProblem({ source: `${shown}${jsonErrorLocation(text, error as Error)}`, message: `invalid JSON: ${(error as Error).message}` });
    return;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) yield { source: `${shown}[${i}]`, value: value[i] };
  } else {
    yield { source: shown, value };
  }
}
