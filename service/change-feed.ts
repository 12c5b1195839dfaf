import { createHash } from 'node:crypto';
import { BuildNotFoundError, InvalidRequestError } from '../core/errors/errors.ts';
import { CHANGES_DIR } from '../core/layout.ts';
import type { ChangeEntry, ChangesPage } from '../core/schemas/history.ts';
import type { Store } from '../storage/store.ts';

/** Changes per page of `GET /v1/changes`. */
export const CHANGES_PAGE = 1000;

/** Bytes of a change feed read at a time: a page of 1000 changes is about 150 KB. */
const CHANGES_CHUNK = 256 * 1024;

/**
 * A page of at most {@link CHANGES_PAGE} changes from kept build `since` to the live build `live`,
 * read from the feed file the live build wrote. The cursor is a byte offset into that file, tied
 * to the live build: a cursor from before a new build is refused, and so is one that does not
 * fall on the start of a line (the byte before it, read with the page, is not a newline).
 */
export async function changesPage(store: Store, live: string, since: string, cursor: string | undefined): Promise<ChangesPage> {
  const file = `${CHANGES_DIR}/${since}.jsonl`;
  const start = cursor === undefined ? 0 : offsetOf(cursor, live);
  const changes: ChangeEntry[] = [];
  let consumed = start;
  let at = start > 0 ? start - 1 : 0;
  let rest: Buffer = Buffer.alloc(0);
  for (let first = true; ; first = false) {
    const chunk = await store.readRange(live, file, at, CHANGES_CHUNK);
    if (!chunk) throw new BuildNotFoundError(since);
    at += chunk.length;
    const end = chunk.length < CHANGES_CHUNK;
    rest = rest.length ? Buffer.concat([rest, chunk]) : chunk;
    if (first && start > 0) {
      if (rest[0] !== 0x0a) throw new InvalidRequestError(`query parameter "cursor": "${cursor}" is not a cursor this API gave`);
      rest = rest.subarray(1);
    }
    for (let nl; changes.length < CHANGES_PAGE && (nl = rest.indexOf(0x0a)) >= 0; rest = rest.subarray(nl + 1)) {
      changes.push(JSON.parse(rest.subarray(0, nl).toString('utf8')) as ChangeEntry);
      consumed += nl + 1;
    }
    // The last line may lack its newline.
    if (end && rest.length > 0 && changes.length < CHANGES_PAGE) {
      changes.push(JSON.parse(rest.toString('utf8')) as ChangeEntry);
      consumed += rest.length + 1;
      rest = Buffer.alloc(0);
    }
    // A full page has a next one only when something follows it: read on until that is known.
    const full = changes.length === CHANGES_PAGE;
    if (end || (full && rest.length > 0))
      return { from: since, to: live, changes, next: full && rest.length > 0 ? cursorOf(consumed, live) : null };
  }
}

const tagOf = (build: string) => createHash('sha256').update(build).digest('base64url').slice(0, 8);
const cursorOf = (offset: number, build: string) => `${offset}.${tagOf(build)}`;

function offsetOf(cursor: string, build: string): number {
  const m = /^(\d{1,15})\.([A-Za-z0-9_-]{8})$/.exec(cursor);
  if (!m) throw new InvalidRequestError(`query parameter "cursor": "${cursor}" is not a cursor this API gave`);
  if (m[2] !== tagOf(build))
    throw new InvalidRequestError('query parameter "cursor": it belongs to an earlier live build; start again without it');
  return Number(m[1]);
}
