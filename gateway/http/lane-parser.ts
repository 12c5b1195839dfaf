import { createRequire } from 'node:module';

/**
 * Node's own HTTP parser for the fast lane (http/fast-lane.ts): llhttp through the `HTTPParser`
 * of `_http_common`, the binding node:http itself uses, present in every release this project
 * runs on. Null when it is missing; the lane is then not installed and node:http serves
 * everything.
 */
export interface ParserBinding {
  HTTPParser: {
    new (): Parser;
    REQUEST: number;
    kOnHeaders: number;
    kOnHeadersComplete: number;
    kOnBody: number;
    kOnMessageComplete: number;
  };
  methods: string[];
}

export interface Parser {
  initialize(type: number, resource: object, maxHeaderSize: number, lenient: number): void;
  execute(data: Buffer): number | Error;
  close(): void;
  [callback: number]: unknown;
}

export const parserBinding = loadBinding();

function loadBinding(): ParserBinding | null {
  try {
    const common = createRequire(import.meta.url)('_http_common') as Partial<ParserBinding>;
    const P = common.HTTPParser;
    if (typeof P !== 'function' || !Array.isArray(common.methods) || typeof P.kOnHeadersComplete !== 'number') return null;
    return common as ParserBinding;
  } catch {
    return null;
  }
}

export const CRLFCRLF = Buffer.from('\r\n\r\n');

/** Whether `data` ends with CR LF CR LF, the end of a head. */
export function endsWithBlankLine(data: Buffer): boolean {
  const n = data.length;
  return n >= 4 && data[n - 1] === 10 && data[n - 2] === 13 && data[n - 3] === 10 && data[n - 4] === 13;
}

/** What the lane needs of a head's headers, or null when they make it node:http's. */
export interface LaneHeaders {
  authorization: string | undefined;
  ifNoneMatch: string | undefined;
}

/**
 * The headers of a head the lane may answer: one `Host`, at most one `Authorization` and one
 * `If-None-Match`, and no `Expect`, `Upgrade` or `Transfer-Encoding`. `headers` is llhttp's flat
 * name/value list. Names are compared by length first, then as clients usually spell them: no
 * lower-cased copy of every name of every request.
 */
export function laneHeaders(h: string[], into: LaneHeaders): boolean {
  let hosts = 0;
  let authorizations = 0;
  let validators = 0;
  into.authorization = undefined;
  into.ifNoneMatch = undefined;
  for (let i = 0; i < h.length; i += 2) {
    const name = h[i]!;
    switch (name.length) {
      case 4:
        if (name === 'Host' || name.toLowerCase() === 'host') hosts++;
        break;
      case 13: {
        const lower = name === 'Authorization' ? 'authorization' : name.toLowerCase();
        if (lower === 'authorization') {
          authorizations++;
          into.authorization = h[i + 1];
        } else if (lower === 'if-none-match') {
          validators++;
          into.ifNoneMatch = h[i + 1];
        }
        break;
      }
      case 6:
      case 7:
      case 17: {
        const lower = name.toLowerCase();
        if (lower === 'expect' || lower === 'upgrade' || lower === 'transfer-encoding') return false;
        break;
      }
    }
  }
  return hosts === 1 && authorizations <= 1 && validators <= 1;
}
