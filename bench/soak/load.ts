import type { Pool } from 'undici';
import { bucketHex, bucketOf, domainHash } from '#shared';
import { sha256 } from '../../core/crypto/hash.ts';
import { normalizeDomain } from '../../core/rules/domain.ts';
import type { Checker } from './check.ts';
import type { Exchange, Kind, Planned } from './exchange.ts';
import type { Timeline } from './timeline.ts';
import type { Workspace } from './workspace.ts';

export const HOT_COUNT = 16;
/** Indexes of the audited domains kept out of the hot and cold mix: fault 3 damages them. */
export const DAMAGED_INDEXES = [16, 17] as const;

/** Inputs the normalizer must refuse (checked at start, so a mistake here is not blamed on the gateway). */
const INVALID_INPUTS = [
  'co.uk',
  'github.io',
  'com',
  'localhost',
  '127.0.0.1',
  '[::1]',
  '0x7f.1',
  'exa mple.example',
  '   ',
  'a..example',
  '-bad.example',
  'bad-.example',
  'under_score.example',
  `${'a'.repeat(64)}.example`,
  `${'ab.'.repeat(90)}example`,
  'example.com\n',
  'tab\t.example',
  'http://',
  'https:///path',
  '//x.example',
  'x'.repeat(3000),
];

/** xorshift32: deterministic from the seed, plenty for picking requests. */
function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
}

const verifyPath = (input: string) => `/v1/verify?domain=${encodeURIComponent(input)}`;
const bundlePath = (domain: string) => `/v1/bundle?domain=${encodeURIComponent(domain)}`;

/** The bucket of a domain's hash a private lookup asks, of `bits` bits (the domain itself never leaves the client). */
export const bucketPath = (domain: string, bits: number) =>
  `/v1/lookup/${bits}/${bucketHex(bucketOf(domainHash(sha256, domain), bits), bits)}`;

/**
 * The request mix: hot records (a few domains, in every accepted spelling), cold records (any
 * audited domain), never-audited domains, invalid domains, requests without a valid key, bundles
 * and private lookups (of audited and never-audited domains, and buckets of other bits than the
 * build's, which are refused). During fault 3 a small share goes to the damaged records; bundles and
 * private lookups stay clear of them (a compact answer holds entries, never records, so only its
 * own domain matters).
 */
export class Mix {
  private readonly rand: () => number;
  private readonly bearer: string;
  private readonly badAuth: (string | undefined)[];
  /** Bits of the buckets sent to `/v1/lookup/` (the live statement's, read at start). */
  private bits = 0;

  constructor(
    private readonly ws: Workspace,
    private readonly timeline: Timeline,
    seed: number,
  ) {
    this.rand = rng(seed ^ 0x5bd1e995);
    this.bearer = `Bearer ${ws.apiKey}`;
    const last = ws.apiKey.at(-1) === 'A' ? 'B' : 'A';
    this.badAuth = [
      undefined,
      `Bearer mvr_0000000000_${'A'.repeat(43)}`,
      `Bearer ${ws.apiKey.slice(0, -1)}${last}`,
      `Bearer ${ws.revokedKey}`,
      'Bearer not-a-key',
      'Basic dXNlcjpwYXNz',
      ws.apiKey,
    ];
    for (const input of INVALID_INPUTS) {
      let accepted: string | null = null;
      try {
        accepted = normalizeDomain(input);
      } catch {
        // refused, as it should be
      }
      if (accepted !== null) throw new Error(`soak mix: ${JSON.stringify(input)} is not an invalid domain (normalizes to ${accepted})`);
    }
  }

  private pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.rand() * xs.length)]!;
  }

  /** A request for an audited domain, in one of the spellings that normalize to it. */
  record(domain: string, kind: Kind, spelled = true): Planned {
    const input = spelled
      ? this.pick([
          domain,
          domain,
          domain.toUpperCase(),
          `https://www.${domain}/tents?x=1`,
          `${domain}.`,
          `HTTP://${domain}:8443/`,
          `shop.${domain}`,
          `  ${domain}  `,
        ])
      : domain;
    return { kind, route: 'verify', path: verifyPath(input), authorization: this.bearer, expect: 'record', domain };
  }

  /** Sets the bits private lookups ask with (the live statement's `lookup.bits`). */
  useBits(bits: number): void {
    this.bits = bits;
  }

  /** A bundle of an audited domain (its record with every proof), or of a never-audited one (its absence proven). */
  bundle(domain: string, audited: boolean): Planned {
    return {
      kind: audited ? 'bundle' : 'bundle-never',
      route: 'bundle',
      path: bundlePath(domain),
      authorization: this.bearer,
      expect: audited ? 'record' : 'unverified',
      domain,
    };
  }

  /**
   * A private lookup: the bucket of the domain's hash at the build's bits; one bit more when
   * `wrongLength` (the gateway answers its build's bits only: refused with PREFIX_LENGTH_MISMATCH).
   */
  lookup(domain: string, audited: boolean, wrongLength = false): Planned {
    return {
      kind: wrongLength ? 'lookup-length' : audited ? 'lookup' : 'lookup-never',
      route: 'lookup',
      path: bucketPath(domain, this.bits + (wrongLength ? 1 : 0)),
      authorization: this.bearer,
      expect: wrongLength ? 'invalid' : audited ? 'record' : 'unverified',
      domain: wrongLength ? null : domain,
    };
  }

  private neverDomain(): string {
    return `never-${Math.floor(this.rand() * 5000)}.example`;
  }

  next(): Planned {
    const r = this.rand();
    const targets = this.timeline.targets;
    if (targets.length > 0 && r < 0.04) return this.record(this.pick(targets), 'damaged', false);
    if (r < 0.3) return this.record(this.ws.domains[Math.floor(this.rand() * HOT_COUNT)]!, 'hot');
    if (r < 0.5) return this.record(this.coldDomain(), 'cold', false);
    if (r < 0.6) {
      const d = this.neverDomain();
      const input = this.pick([d, d, `www.${d}`, `https://${d}/p?q=1`, d.toUpperCase()]);
      return { kind: 'never', route: 'verify', path: verifyPath(input), authorization: this.bearer, expect: 'unverified', domain: d };
    }
    if (r < 0.68) {
      const audited = this.rand() < 0.8;
      return this.bundle(audited ? this.coldDomain() : this.neverDomain(), audited);
    }
    if (r < 0.76) {
      const q = this.rand();
      if (q < 0.1) return this.lookup(this.coldDomain(), true, true);
      const audited = q < 0.8;
      return this.lookup(audited ? this.coldDomain() : this.neverDomain(), audited);
    }
    if (r < 0.9) {
      const q = this.rand();
      const path =
        q < 0.06
          ? '/v1/verify'
          : q < 0.12
            ? '/v1/verify?domain=a.example&domain=b.example'
            : q < 0.16
              ? '/v1/verify?domain='
              : verifyPath(this.pick(INVALID_INPUTS));
      return { kind: 'invalid', route: 'verify', path, authorization: this.bearer, expect: 'invalid', domain: null };
    }
    // No key or a bad one: 401 before anything else, whatever the domain (key first, then domain).
    const authorization = this.pick(this.badAuth);
    const path =
      this.rand() < 0.7 ? verifyPath(this.ws.domains[Math.floor(this.rand() * HOT_COUNT)]!) : verifyPath(this.pick(INVALID_INPUTS));
    return {
      kind: authorization === undefined ? 'noauth' : 'badkey',
      route: 'verify',
      path,
      authorization,
      expect: 'unauthorized',
      domain: null,
    };
  }

  /** Any audited domain except the ones fault 3 damages. */
  coldDomain(): string {
    const n = this.ws.domains.length - DAMAGED_INDEXES.length;
    let i = Math.floor(this.rand() * n);
    if (i >= DAMAGED_INDEXES[0]) i += DAMAGED_INDEXES.length;
    return this.ws.domains[i]!;
  }
}

const header = (v: string | string[] | undefined) => (Array.isArray(v) ? v.join(', ') : (v ?? ''));

/** One GET, body read in full; network failures are an Exchange with status 0. */
export async function send(pool: Pool, planned: Planned, signal?: AbortSignal): Promise<Exchange> {
  const first = await sendOnce(pool, planned, signal);
  // A kept-alive connection the gateway closed (its keep-alive deadline) just as this request went out on it: no
  // byte of an answer came. A GET is idempotent, so a client may send it again on a new connection (RFC 9112,
  // section 9.3.1); once, and counted, so a gateway that closes connections under requests still shows.
  if (first.status !== 0 || !first.error?.startsWith('UND_ERR_SOCKET') || signal?.aborted) return first;
  const again = await sendOnce(pool, planned, signal);
  return { ...again, start: first.start, retriedAfter: first.error };
}

async function sendOnce(pool: Pool, planned: Planned, signal?: AbortSignal): Promise<Exchange> {
  const start = performance.now();
  let headed = false;
  try {
    const headers = planned.authorization === undefined ? {} : { authorization: planned.authorization };
    let head: string | undefined;
    if (planned.route === 'lookup') {
      // A private client reads the live statement first; a refusal of it is the lookup's answer.
      const res = await pool.request({ method: 'GET', path: '/v1/lookup', headers, signal });
      const text = await res.body.text();
      if (res.statusCode !== 200) return { ...answered(planned, start, res.statusCode, res.headers), body: text };
      head = text;
    }
    const res = await pool.request({ method: 'GET', path: planned.path, headers, signal });
    headed = true;
    const bytes = Buffer.from(await res.body.arrayBuffer());
    const compact = head !== undefined && res.statusCode === 200;
    return { ...answered(planned, start, res.statusCode, res.headers), body: bytes.toString(compact ? 'base64' : 'utf8'), head };
  } catch (error) {
    const e = error as { code?: string; name?: string; message?: string };
    return {
      planned,
      start,
      end: performance.now(),
      status: 0,
      contentType: '',
      wwwAuthenticate: '',
      body: '',
      // Cut after its head came: an answer cut short, never sent again.
      error: `${headed ? 'after the head, ' : ''}${e.code ?? e.name ?? 'error'}: ${e.message ?? ''}`,
    };
  }
}

function answered(planned: Planned, start: number, status: number, headers: Record<string, string | string[] | undefined>) {
  return {
    planned,
    start,
    end: performance.now(),
    status,
    contentType: header(headers['content-type']),
    wwwAuthenticate: header(headers['www-authenticate']),
  };
}

/** GET a JSON document (the key set), or throw. */
export async function getJson(pool: Pool, path: string): Promise<unknown> {
  const res = await pool.request({ method: 'GET', path });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`GET ${path}: ${res.statusCode} ${text.slice(0, 200)}`);
  return JSON.parse(text);
}

/**
 * `concurrency` loops, each one request at a time, so exactly that many are in flight. Every
 * loop stops at the deadline (read each turn: the runner may extend it for a fault still
 * running, never past its hard cap), at `maxRequests` in all, or when aborted.
 */
export async function runLoad(args: {
  pool: Pool;
  mix: Mix;
  checker: Checker;
  concurrency: number;
  deadline: () => number;
  maxRequests: number;
  signal: AbortSignal;
}): Promise<{ issued: number; hitMaxRequests: boolean }> {
  let issued = 0;
  const loop = async () => {
    while (!args.signal.aborted && issued < args.maxRequests && performance.now() < args.deadline()) {
      issued++;
      const ex = await send(args.pool, args.mix.next(), args.signal);
      if (args.signal.aborted) return;
      await args.checker.record(ex);
    }
  };
  await Promise.all(Array.from({ length: args.concurrency }, loop));
  return { issued, hitMaxRequests: issued >= args.maxRequests };
}
