import type { SigningKey } from '../core/signing.ts';
import type { ApiKeyStore, KeyMemo } from './api-keys.ts';
import type { RecordStore } from './store/record-store.ts';
import type { FixedWindowLimiter, RateDecision } from './rate-limit.ts';

/** One structured log line (JSON). Never carries an API key or key material. */
export type LogLine = Record<string, unknown> & { level: 'info' | 'warn' | 'error'; msg: string };

/** Everything a route needs, resolved once at start-up. */
export interface GatewayContext {
  issuer: string;
  schemaUrl: string;
  store: RecordStore;
  apiKeys: ApiKeyStore;
  /** Signs never-audited answers when set (opt-in); null by default, so the gateway holds no private key. */
  unverifiedSigner: SigningKey | null;
  log: (line: LogLine) => void;
  /** One log line per request (off with `--quiet`; errors and warnings are logged regardless). */
  accessLog: boolean;
  /** Quotas: per API key, and per client address for requests without a valid key; null = off. */
  limits: { perKey: FixedWindowLimiter | null; perAddress: FixedWindowLimiter | null };
}

/**
 * What a request's handling learned, for its access log line: filled by the gate, the route and
 * the problem writer. On the node:http path it is the h3 event's context; the fast lane
 * (http/fast-lane.ts) gives each request a plain one.
 */
export interface RequestNote {
  keyId?: string;
  rateLimit?: RateDecision;
  domain?: string;
  errorCode?: string;
}

/** What the record endpoint reads of a request (on either path). */
export interface VerifyQuestion {
  /** The request target: `/v1/verify?domain=...`. */
  target: string;
  authorization: string | undefined;
  ifNoneMatch: string | undefined;
  remoteAddress: string | undefined;
  /** The connection's memo of its last accepted key (the fast lane keeps one per connection). */
  keyMemo?: KeyMemo;
  /**
   * When the request is answered (epoch ms): read once per request by the caller and used for
   * everything the answer depends on (the quota window, a never-audited answer's issued_at).
   * Each reading of the clock is a call out of JavaScript, a visible share of a small request.
   */
  now: number;
}

/**
 * Header fields shared by many answers (a record's, a problem's), as a flat name/value list that
 * is never changed once made, so a writer may keep its rendering of them here, on the object:
 * a plain field read the same way for every answer (a symbol-keyed property on the list itself
 * had cost a hot request about 0.3 us in the fast lane, perf).
 */
export class SharedHeaders {
  /** The fast lane's header lines for these fields (http/answer-bytes.ts): undefined until first written, null after, kept bytes from the second time on. */
  lines: Buffer | null | undefined = undefined;
  constructor(readonly fields: readonly string[]) {}
}

/**
 * A whole answer, written by either path: status, headers as flat name/value lists (Content-Length
 * included when there is a body), body.
 */
export interface Answer {
  status: number;
  /** Headers shared by many answers: read, never written to, so writers may keep their rendering. */
  headers: SharedHeaders;
  /** This answer's own further headers (a never-audited answer's entity tag and length, a 429's Retry-After), or null. */
  more: string[] | null;
  /** The quota decision whose `RateLimit-Policy` and `RateLimit` fields end the headers, or null. */
  quota: RateDecision | null;
  /** null for a 304; a HEAD answer carries the GET body's bytes here and the writer leaves them out. */
  body: Buffer | null;
  /**
   * Instead of `body` (which is then null): a body the writer makes in place, with its entity tag.
   * The writer puts the ETag and Content-Length fields for it after `more`.
   */
  fill?: FilledBody;
}

/**
 * A body made for one answer and written straight into the answer's own buffer by the fast lane,
 * rather than made as bytes first and copied (a never-audited record: a template and a domain);
 * its entity tag likewise, as text only when asked for (node:http's writer, If-None-Match).
 */
export interface FilledBody {
  /** The body's length in bytes. */
  readonly length: number;
  /** Writes the body's bytes at `at`; returns the offset after them. */
  writeBody(out: Uint8Array, at: number): number;
  /** The entity tag's length in bytes (quotes included). */
  readonly etagLength: number;
  /** Writes the entity tag at `at`; returns the offset after it. */
  writeEtag(out: Uint8Array, at: number): number;
  /** The entity tag as text. */
  readonly etag: string;
  /** The body as bytes of its own. */
  bytes(): Buffer;
}

declare module 'h3' {
  // The h3 event's context is the node:http path's note.
  interface H3EventContext extends RequestNote {}
}
