import { InvalidRequestError, isMvrError, type MvrError } from '../core/errors/errors.ts';
import { normalizeDomain } from '../core/rules/domain.ts';
import { batchRequestSchema, MAX_BATCH } from '../core/schemas/batch.ts';

/** One domain's answer in a batch: the record's bytes (as the single lookup gives them), or why not. */
export type BatchResult = { domain: string; record: Buffer } | { domain: string; problem: MvrError };

/** The domains of a batch request body; anything but `{"domains": [...]}` with 1 to 100 strings is INVALID_REQUEST naming the member at fault. */
export function batchDomains(body: unknown): string[] {
  const parsed = batchRequestSchema.safeParse(body);
  if (parsed.success) return parsed.data.domains;
  const issue = parsed.error.issues[0]!;
  const member = issue.path
    .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
    .join('')
    .replace(/^\./, '');
  const keys = issue.code === 'unrecognized_keys' ? ` ${issue.keys.map((k) => `"${k}"`).join(', ')}` : '';
  throw new InvalidRequestError(
    `${member ? `body member "${member}"` : 'the body'}: ${issue.message}${keys}; the body is {"domains": [...]} with 1 to ${MAX_BATCH} strings`,
  );
}

/**
 * Looks up every domain in order through `lookup` (the records service, as the single lookup
 * does). A domain that is not valid, or whose record cannot be served, is a problem in its place;
 * a store that cannot be read at all fails the whole batch (STORE_UNAVAILABLE), as it would fail
 * every domain.
 */
export async function lookupBatch(domains: string[], lookup: (domain: string) => Promise<Buffer>): Promise<BatchResult[]> {
  return Promise.all(
    domains.map(async (domain): Promise<BatchResult> => {
      try {
        return { domain, record: await lookup(normalizeDomain(domain)) };
      } catch (error) {
        if (isMvrError(error) && (error.code === 'INVALID_DOMAIN' || error.code === 'UNAVAILABLE')) return { domain, problem: error };
        throw error;
      }
    }),
  );
}
