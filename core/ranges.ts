import parseRange from 'range-parser';
import { RangeNotSatisfiableError, StoreUnavailableError } from './errors/errors.ts';

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

/**
 * The one byte range a `Range` field asks of a file of `size` bytes, as [first, last], or null to
 * send the whole file: no field, one that is not a bytes range, or several ranges (RFC 9110 14.2
 * lets a server answer those whole). A range with no byte of the file is RangeNotSatisfiableError
 * (416). A suffix longer than the file (`bytes=-N`, N > size) selects the whole file (RFC 9110
 * 14.1.2), which range-parser 1.3 would call unsatisfiable: such a suffix is asked of it as `0-`.
 */
export function requestedRange(field: string | undefined, size: number): [number, number] | null {
  if (field === undefined) return null;
  const ranges = parseRange(size, wholeForLongSuffixes(field, size), { combine: true });
  if (ranges === -1) throw new RangeNotSatisfiableError(size, field);
  if (ranges === -2 || ranges.type !== 'bytes' || ranges.length !== 1) return null;
  return [ranges[0]!.start, ranges[0]!.end];
}

/** `field` with each suffix range longer than a non-empty file written `0-` (the same bytes: all of them). */
function wholeForLongSuffixes(field: string, size: number): string {
  const eq = field.indexOf('=');
  if (eq < 0 || size === 0) return field;
  const specs = field.slice(eq + 1).split(',');
  return `${field.slice(0, eq + 1)}${specs.map((spec) => (Number(/^\s*-\s*(\d+)\s*$/.exec(spec)?.[1] ?? 0) > size ? '0-' : spec)).join(',')}`;
}
