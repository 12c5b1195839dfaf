/**
 * The soak's exchanges and verdicts, as types: what the load sends, what comes back, and how the
 * checker rules on it. They sit apart from the checker so that the stats can name them without
 * importing it (the checker imports the stats).
 */
export type Kind =
  | 'hot'
  | 'cold'
  | 'never'
  | 'invalid'
  | 'noauth'
  | 'badkey'
  | 'damaged'
  | 'probe'
  | 'bundle'
  | 'bundle-never'
  | 'lookup'
  | 'lookup-never'
  | 'lookup-length';

/**
 * The route asked: a plain lookup (`/v1/verify`), an offline bundle (`/v1/bundle`, checked with
 * verifyBundle) or a private lookup (`GET /v1/lookup`, then `/v1/lookup/{bits}/{hex}`, checked
 * with verifyCompactAnswer against that statement).
 */
export type Route = 'verify' | 'bundle' | 'lookup';

/** One request of the mix, with the answer it must get. */
export interface Planned {
  kind: Kind;
  route: Route;
  path: string;
  authorization: string | undefined;
  /**
   * record: an audited domain (a signed record of the right build); unverified: a valid domain
   * never audited (for a bundle or a private lookup: its absence proven); invalid: 400
   * INVALID_DOMAIN (PREFIX_LENGTH_MISMATCH for a private lookup of other bits); unauthorized: 401.
   */
  expect: 'record' | 'unverified' | 'invalid' | 'unauthorized';
  /** The normalized domain a 200 must carry (null when no 200 is right). */
  domain: string | null;
}

export interface Exchange {
  planned: Planned;
  /** performance.now() before the request was sent and after its body was read. */
  start: number;
  end: number;
  /** 0 when there was no HTTP answer (see `error`). */
  status: number;
  contentType: string;
  wwwAuthenticate: string;
  /** The answer's text; a compact answer's bytes (a private lookup's 200) in base64. */
  body: string;
  /** A private lookup's statement (`GET /v1/lookup`), read just before its bucket, as a client reads it. */
  head?: string;
  error?: string;
  /** Sent again once, after its first sending got no answer on a connection the gateway had closed (this error). */
  retriedAfter?: string;
}

/** expected-refusal: a coded refusal (by the gateway or the package's verifier) that fits the fault in force. */
export type Outcome = 'ok' | 'expected-503' | 'expected-refusal' | 'wrong' | 'unexpected-5xx' | 'transport-error';

export interface Verdict {
  outcome: Outcome;
  reason?: string;
  /** The parsed body of a 200. */
  record?: Record<string, unknown>;
}

export interface Example {
  outcome: Outcome;
  reason: string;
  kind: Kind;
  route: Route | 'mirror';
  path: string;
  status: number;
  startMs: number;
  endMs: number;
  body: string;
}
