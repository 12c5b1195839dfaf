import type { H3Event } from 'h3';
import { canonicalJson } from '../../core/canonical.ts';
import { normalizeDomain } from '../../core/domain.ts';
import { InvalidDomainError } from '../../core/errors.ts';
import { unverifiedRecord, unverifiedRecordTemplate } from '../../core/record.ts';
import { signRecord } from '../../core/signing.ts';
import { formatTimestamp } from '../../core/time.ts';
import { matchesIfNoneMatch, queryOf, reply, strongEtag } from '../http/reply.ts';
import type { GatewayContext } from '../context.ts';
import { authorize } from '../http/authorize.ts';
import { rateLimitHeaders } from '../rate-limit.ts';

/** SPEC 4.1 and section 8: the same for every 200 and 304 of the record endpoint. */
export const RECORD_CACHE_CONTROL = 'public, max-age=60, s-maxage=300';

/**
 * `GET /v1/verify?domain=`: key first (401 before 400), then the domain, then the record.
 * The body is the stored file's exact bytes, or a synthesized `unverified` record for a valid
 * domain that was never audited.
 */
export async function handleVerify(event: H3Event, ctx: GatewayContext): Promise<void> {
  authorize(event, ctx);
  const domain = domainFromQuery(queryOf(event));
  event.context.domain = domain;
  const { bytes, etag } = await recordFor(domain, ctx);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'cache-control': RECORD_CACHE_CONTROL,
    vary: 'Authorization',
    etag,
    ...(event.context.rateLimit ? rateLimitHeaders(event.context.rateLimit) : {}),
  };
  if (matchesIfNoneMatch(event.node.req.headers['if-none-match'], etag)) {
    await reply(event, 304, headers, null);
    return;
  }
  await reply(event, 200, headers, bytes);
}

/** The stored record, verified; or the never-audited answer. Shared with the MCP tool so both serve the same bytes. */
export async function recordFor(domain: string, ctx: Pick<GatewayContext, 'store' | 'issuer' | 'schemaUrl' | 'unverifiedSigner'>): Promise<{ bytes: Buffer; etag: string; synthesized: boolean }> {
  const hot = ctx.store.cached(domain);
  if (hot) return { ...hot, synthesized: false };
  if (!ctx.store.knownAbsent(domain)) {
    const found = await ctx.store.lookup(domain);
    if (found.kind === 'record') return { ...found.record, synthesized: false };
  }
  const now = Date.now();
  const issuedAt = formatTimestamp(now);
  if (ctx.unverifiedSigner) {
    const bytes = Buffer.from(canonicalJson(signRecord(unverifiedRecord(domain, { issuer: ctx.issuer, schemaUrl: ctx.schemaUrl, issuedAt }), ctx.unverifiedSigner)));
    return { bytes, etag: strongEtag(bytes), synthesized: true };
  }
  // The unsigned answer's bytes are a function of the domain and issued_at alone (issuer and
  // schema are fixed for the process), so those two make a strong validator without hashing.
  return { bytes: Buffer.from(templateFor(ctx)(domain, issuedAt)), etag: `"u.${domain}.${now.toString(36)}"`, synthesized: true };
}

const templates = new Map<string, ReturnType<typeof unverifiedRecordTemplate>>();
function templateFor(ctx: { issuer: string; schemaUrl: string }) {
  const key = `${ctx.issuer}\u0000${ctx.schemaUrl}`;
  let t = templates.get(key);
  if (!t) templates.set(key, (t = unverifiedRecordTemplate(ctx)));
  return t;
}

/** Exactly one `domain` parameter, normalized; errors name the query parameter. */
export function domainFromQuery(query: URLSearchParams): string {
  const values = query.getAll('domain');
  if (values.length === 0) throw new InvalidDomainError('query parameter "domain" is required');
  if (values.length > 1) throw new InvalidDomainError(`query parameter "domain" is given ${values.length} times; give it once`);
  const raw = values[0]!;
  const known = normalized.get(raw);
  if (known !== undefined) return known;
  try {
    const domain = normalizeDomain(raw);
    // Only valid inputs are remembered, and only short ones: the cache cannot be filled with junk
    // by one request each, and stays small (it is cleared when full rather than tracked as an LRU).
    if (raw.length <= 128) {
      if (normalized.size >= NORMALIZED_CACHE_ENTRIES) normalized.clear();
      normalized.set(raw, domain);
    }
    return domain;
  } catch (error) {
    throw new InvalidDomainError(`query parameter "domain": ${(error as Error).message}`);
  }
}

/** Raw `domain` values already normalized: a hot domain skips URL parsing and the suffix list. */
const NORMALIZED_CACHE_ENTRIES = 50_000;
const normalized = new Map<string, string>();
