import { StoreUnavailableError } from './errors.ts';

/** An HTTP answer as the stores' and the clients' transports read it. */
export interface RangeAnswer {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** The `Range` header asking for `length` bytes from byte `start` (`length` above 0). */
export function rangeHeader(start: number, length: number): { range: string } {
  return { range: `bytes=${start}-${start + length - 1}` };
}

const CONTENT_RANGE = /^bytes (\d+)-(\d+)\/(\d+|\*)$/;

/**
 * The bytes of an answer to a range request (see {@link rangeHeader}), only when they are the
 * range asked for: a 206 whose `Content-Range` starts at `start`, spans the body and ends within
 * the range (fewer bytes at the file's end), or a 416 (the range starts at or past the end: no
 * bytes). A 200 is a store that ignored the range, and any other range a store that answered
 * another question: both STORE_UNAVAILABLE, since bytes from elsewhere in a pack are no record.
 * Other statuses are the caller's. One rule for every reader of ranges: an http(s) origin, a
 * bucket, a gateway's mirror routes.
 */
export function rangeBody(res: RangeAnswer, start: number, length: number, where: string): Buffer {
  if (res.statusCode === 416) return Buffer.alloc(0);
  if (res.statusCode === 200)
    throw new StoreUnavailableError(`${where} ignored a range request (answered 200, not 206): records are read as ranges of packs`);
  const header = res.headers['content-range'];
  const m = typeof header === 'string' ? CONTENT_RANGE.exec(header) : null;
  const first = Number(m?.[1]);
  const last = Number(m?.[2]);
  if (!m || first !== start || last - first + 1 !== res.body.length || last > start + length - 1)
    throw new StoreUnavailableError(
      `${where} answered bytes ${String(header ?? '(no Content-Range)')} (${res.body.length} bytes) to a request for bytes ${start}-${start + length - 1}`,
    );
  return res.body;
}
