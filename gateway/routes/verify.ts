import type { H3Event } from 'h3';
import { normalizeDomain } from '../../core/domain.ts';
import { InvalidDomainError } from '../../core/errors.ts';
import { unverifiedRecord } from '../../core/record.ts';
import { unverifiedRecordTemplate, type UnverifiedTemplate } from '../../core/record-text.ts';
import { writeLatin1 } from '../../core/latin1.ts';
import { signUnsignedChecked } from '../../core/signing.ts';
import { formatTimestamp } from '../../core/time.ts';
import { matchesIfNoneMatch, sendAnswer, strongEtag } from '../http/reply.ts';
import { SharedHeaders, type Answer, type FilledBody, type GatewayContext, type RequestNote, type VerifyQuestion } from '../context.ts';
import type { ServedRecord } from '../store/record-store.ts';
import { authorize } from '../http/authorize.ts';
import { problemAnswer } from '../http/problem.ts';

/** SPEC 4.1 and section 8: the same for every 200 and 304 of the record endpoint. */
export const RECORD_CACHE_CONTROL = 'public, max-age=60, s-maxage=300';

/** `GET /v1/verify?domain=` on the node:http path (the fast lane calls {@link answerVerify} itself). */
export async function handleVerify(event: H3Event, ctx: GatewayContext): Promise<void> {
  const { req } = event.node;
  const question = { target: req.url ?? '/', authorization: req.headers.authorization, ifNoneMatch: req.headers['if-none-match'], remoteAddress: req.socket.remoteAddress, now: Date.now() };
  const answer = answerVerify(event.context, question, ctx);
  return sendAnswer(event, answer instanceof Promise ? await answer : answer);
}

/**
 * The record endpoint's answer: key first (401 before 400), then the domain, then the record.
 * The body is the stored file's exact bytes, or a synthesized `unverified` record for a valid
 * domain that was never audited. A cached record and a domain known to have none are answered
 * at once, without a promise; a file read returns one. Throws the INVALID_DOMAIN,
 * STORE_UNAVAILABLE and UNAVAILABLE errors (the caller turns them into problem documents).
 */
export function answerVerify(note: RequestNote, q: VerifyQuestion, ctx: GatewayContext): Answer | Promise<Answer> {
  const gate = authorize(note, q.authorization, q.remoteAddress, ctx, q.keyMemo, q.now);
  if (typeof gate !== 'string') return problemAnswer(gate, ctx.issuer, note);
  const domain = domainFromTarget(q.target);
  note.domain = domain;
  // Answered at once from memory when it can be: a verified record in the cache, or a domain the
  // live build is known not to have; a file read otherwise (a promise).
  const known = ctx.store.peek(domain);
  if (known === 'absent') return neverAuditedAnswer(domain, ctx, note, q, q.now);
  if (known) return recordAnswer(known, note, q);
  // The clock read again for a never-audited answer: the lookup may have waited on a file.
  return ctx.store.lookup(domain).then((found) => (found.kind === 'record' ? recordAnswer(found.record, note, q) : neverAuditedAnswer(domain, ctx, note, q, Date.now())));
}

/**
 * The answer for a domain known to have no record. Unsigned (the default), its record is not made
 * as bytes here: the answer carries it as a {@link FilledBody} that the fast lane writes straight
 * into the answer's buffer (node:http's writer asks it for bytes), and its entity tag is made as
 * text only for an If-None-Match to compare. Signed, it is the kept answer of its second.
 */
function neverAuditedAnswer(domain: string, ctx: RecordContext, note: RequestNote, q: VerifyQuestion, now: number): Answer {
  if (ctx.unverifiedSigner) return recordAnswer(neverAudited(domain, ctx, now), note, q);
  const body = neverAuditedBody(domain, ctx, now);
  const quota = note.rateLimit ?? null;
  if (q.ifNoneMatch && matchesIfNoneMatch(q.ifNoneMatch, body.etag)) return { status: 304, headers: RECORD_HEADERS, more: ownHeaders(body.etag, null), quota, body: null };
  return { status: 200, headers: RECORD_HEADERS, more: null, quota, body: null, fill: body };
}

function recordAnswer(served: Served, note: RequestNote, q: VerifyQuestion): Answer {
  const { bytes, etag } = served;
  const quota = note.rateLimit ?? null;
  const notModified = matchesIfNoneMatch(q.ifNoneMatch, etag);
  // Made on a record's first answer and kept on the cache's entry (or on a signed never-audited
  // answer, kept for its second), not per request: the fast lane also keeps its rendering of a
  // shared list.
  const lists = (served.lists ??= headerListsFor(bytes, etag));
  if (notModified) return { status: 304, headers: lists.notModified, more: null, quota, body: null };
  return { status: 200, headers: lists.ok, more: null, quota, body: bytes };
}

/** The headers every record answer starts with (flat name/value, the cheapest form for Node's writeHead). */
const RECORD_FIELDS: readonly string[] = ['content-type', 'application/json', 'cache-control', RECORD_CACHE_CONTROL, 'vary', 'Authorization'];
/** An unsigned never-audited answer's shared headers: the record's first ones (its entity tag and length follow, from its FilledBody; a 304's tag in `more`). */
const RECORD_HEADERS = new SharedHeaders(RECORD_FIELDS);

function headerListsFor(bytes: Buffer, etag: string): HeaderLists {
  return { notModified: new SharedHeaders([...RECORD_FIELDS, ...ownHeaders(etag, null)]), ok: new SharedHeaders([...RECORD_FIELDS, ...ownHeaders(etag, bytes)]) };
}

/** What follows RECORD_FIELDS in a record answer: its entity tag, and its length when it has a body (not a 304). */
function ownHeaders(etag: string, body: Buffer | null): string[] {
  return body ? ['etag', etag, 'content-length', String(body.length)] : ['etag', etag];
}

interface HeaderLists {
  ok: SharedHeaders;
  notModified: SharedHeaders;
}

/** A verified stored record, or a signed never-audited answer: either carries its header lists once answered over HTTP. */
type Served = ServedRecord & { lists?: HeaderLists };
type RecordContext = Pick<GatewayContext, 'store' | 'issuer' | 'schemaUrl' | 'unverifiedSigner'>;

/** The stored record, verified; or the never-audited record: the MCP tool's, the same bytes as the HTTP endpoint's. */
export async function recordFor(domain: string, ctx: RecordContext): Promise<ServedRecord> {
  // lookup() answers from memory first itself (the cache, the known-absent set).
  const found = await ctx.store.lookup(domain);
  if (found.kind === 'record') return found.record;
  // The clock read again: the lookup may have waited on a file.
  return neverAudited(domain, ctx, Date.now());
}

/**
 * The never-audited answer, issued at the start of the current second: its issued_at is at most a
 * second old, well inside the minute the answer itself may be cached for (Cache-Control
 * max-age=60). Unsigned, it is a function of the domain and that second alone, so it is made
 * anew for each question (a template filled in: {@link neverAuditedBody}) and is still the same
 * bytes and ETag all second long: a burst of questions about one unknown shop sees one answer,
 * and a conditional request gets its 304. Nothing is kept: answers kept for their second were
 * garbage for the old generation under load, a major collection or more a second (sampling heap
 * profile). Signed (`--sign-unverified`), an answer costs a signature and its check, so one per
 * domain and second is kept and reused, with the header lists its HTTP answers make; that memory
 * is bounded at 2 x RECENT_ENTRIES answers of about 1 KB. Made here as bytes: the MCP tool's, and
 * the signed answers; the HTTP endpoint's unsigned answer is {@link neverAuditedAnswer}'s FilledBody.
 */
function neverAudited(domain: string, ctx: RecordContext, now: number): Served {
  if (!ctx.unverifiedSigner) {
    const body = neverAuditedBody(domain, ctx, now);
    return { bytes: body.bytes(), etag: body.etag };
  }
  const state = stateAt(ctx, now);
  const kept = state.recent.get(domain) ?? state.older.get(domain);
  if (kept?.second === state.second) return kept.served;
  // Signed and self-checked like a built record; the stored text comes from the same parts.
  const signed = signUnsignedChecked(unverifiedRecord(domain, { issuer: ctx.issuer, schemaUrl: ctx.schemaUrl, issuedAt: state.issuedAt }), ctx.unverifiedSigner);
  const bytes = Buffer.from(signed.canonical);
  const served: Served = { bytes, etag: strongEtag(bytes) };
  // Past RECENT_ENTRIES in a second, answers are made but not kept.
  if (state.recent.size < RECENT_ENTRIES) state.recent.set(domain, { second: state.second, served });
  return served;
}

/** The unsigned never-audited record of a domain at the current second, not yet made as bytes. */
function neverAuditedBody(domain: string, ctx: RecordContext, now: number): NeverAuditedBody {
  const state = stateAt(ctx, now);
  return new NeverAuditedBody(state.template, domain, state.issuedAt, state.stamp);
}

/**
 * An unsigned never-audited record: its bytes are a function of the domain and issued_at alone
 * (issuer and schema are fixed for the process), so those two make a strong validator without
 * hashing, `"u.<domain>.<second in base 36>"`.
 */
class NeverAuditedBody implements FilledBody {
  readonly length: number;
  constructor(
    private readonly template: UnverifiedTemplate,
    private readonly domain: string,
    private readonly issuedAt: string,
    private readonly stamp: string,
  ) {
    this.length = template.length(domain, issuedAt);
  }

  get etagLength(): number {
    // `"u.` and `."` around the domain, `"` after the stamp; both ASCII.
    return this.domain.length + this.stamp.length + 5;
  }

  writeEtag(out: Uint8Array, at: number): number {
    out[at++] = 34; // "
    out[at++] = 117; // u
    out[at++] = 46; // .
    at = writeLatin1(out, at, this.domain);
    out[at++] = 46;
    at = writeLatin1(out, at, this.stamp);
    out[at++] = 34;
    return at;
  }

  get etag(): string {
    return `"u.${this.domain}.${this.stamp}"`;
  }

  writeBody(out: Uint8Array, at: number): number {
    return this.template.write(out, at, this.domain, this.issuedAt);
  }

  bytes(): Buffer {
    return this.template.bytes(this.domain, this.issuedAt);
  }
}

/** The never-audited state of a context at `now`, moved on to the current second first. */
function stateAt(ctx: RecordContext, now: number): NeverAuditedState {
  const state = stateFor(ctx);
  const second = Math.floor(now / 1000) * 1000;
  if (second !== state.second) {
    state.second = second;
    state.issuedAt = formatTimestamp(second);
    state.stamp = second.toString(36);
    // Signed answers kept: the last second's and this one's (empty unless --sign-unverified).
    state.older = state.recent;
    state.recent = new Map();
  }
  return state;
}

const RECENT_ENTRIES = 5_000;

interface NeverAuditedState {
  template: UnverifiedTemplate;
  /** The current second (epoch ms), its issued_at text and its ETag suffix. */
  second: number;
  issuedAt: string;
  stamp: string;
  /** Signed answers only: this second's and the last one's. */
  recent: Map<string, { second: number; served: Served }>;
  older: Map<string, { second: number; served: Served }>;
}

/** Per context, fixed for its life (a process may run several gateways, as the tests do): the template and the signed answers kept. */
const states = new WeakMap<object, NeverAuditedState>();
function stateFor(ctx: RecordContext): NeverAuditedState {
  let state = states.get(ctx);
  if (!state) {
    state = { template: unverifiedRecordTemplate(ctx), second: -1, issuedAt: '', stamp: '', recent: new Map(), older: new Map() };
    states.set(ctx, state);
  }
  return state;
}

/**
 * The `domain` of a request target. A target asked before with a valid domain is answered from
 * memory, keyed by the whole target as the request gave it: no slicing, no query parsing, no
 * suffix list (a hot request's target is one flat string, hashed once). Otherwise the common
 * form, `?domain=<value>` alone with nothing to decode (no `&`, `%` or `+`), is read without a
 * query parser; anything else goes through URLSearchParams and {@link domainFromQuery}, with the
 * same result.
 */
export function domainFromTarget(target: string): string {
  const known = normalizedTargets.get(target);
  if (known !== undefined) return known;
  const q = target.indexOf('?');
  const query = q < 0 ? '' : target.slice(q + 1);
  const domain = query.startsWith('domain=') && !/[&%+]/.test(query) ? normalizedParam(query.slice(7)) : domainFromQuery(new URLSearchParams(query));
  // Only targets with a valid domain are remembered, and only short ones: the cache cannot be
  // filled with junk by one request each, and stays small (it is cleared when full rather than
  // tracked as an LRU).
  if (target.length <= MAX_REMEMBERED_TARGET) {
    if (normalizedTargets.size >= NORMALIZED_CACHE_ENTRIES) normalizedTargets.clear();
    normalizedTargets.set(target, domain);
  }
  return domain;
}

/** Exactly one `domain` parameter, normalized; errors name the query parameter. */
function domainFromQuery(query: URLSearchParams): string {
  const values = query.getAll('domain');
  if (values.length === 0) throw new InvalidDomainError('query parameter "domain" is required');
  if (values.length > 1) throw new InvalidDomainError(`query parameter "domain" is given ${values.length} times; give it once`);
  return normalizedParam(values[0]!);
}

function normalizedParam(raw: string): string {
  try {
    return normalizeDomain(raw);
  } catch (error) {
    throw new InvalidDomainError(`query parameter "domain": ${(error as Error).message}`);
  }
}

/** Request targets already read, and their normalized domain: a hot domain skips parsing and the suffix list. */
const NORMALIZED_CACHE_ENTRIES = 50_000;
const MAX_REMEMBERED_TARGET = 160;
const normalizedTargets = new Map<string, string>();
