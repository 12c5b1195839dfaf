import type { KeyMemo, UnauthorizedError } from '../api-keys.ts';
import type { GatewayContext, RequestNote } from '../context.ts';
import { RateLimitedError } from '../rate-limit.ts';

/**
 * The gate in front of every key-gated route: a valid Bearer key, then its quota. Requests
 * without a valid key are counted per client address, so a flood of them turns into cheap 429s
 * and cannot use up what keyed callers need; keyed callers are counted per key id.
 * Returns the key id, or the UNAUTHORIZED or RATE_LIMITED error to answer with (returned, not
 * thrown, so the answer to a flood of bad requests costs no more than a record). The key id and
 * the quota decision are noted for the access log and the RateLimit headers.
 */
export function authorize(
  note: RequestNote,
  authorization: string | undefined,
  remoteAddress: string | undefined,
  ctx: GatewayContext,
  memo?: KeyMemo,
  now = Date.now(),
): string | UnauthorizedError | RateLimitedError {
  const keyId = ctx.apiKeys.check(authorization, memo);
  if (typeof keyId !== 'string') {
    if (ctx.limits.perAddress) {
      const decision = ctx.limits.perAddress.take(remoteAddress ?? 'unknown', now);
      if (!decision.allowed) return new RateLimitedError('too many requests without a valid API key from this address', decision);
    }
    return keyId;
  }
  note.keyId = keyId;
  if (ctx.limits.perKey) {
    const decision = ctx.limits.perKey.take(keyId, now);
    note.rateLimit = decision;
    if (!decision.allowed) return new RateLimitedError(`API key ${keyId} is over its quota of ${decision.policy.quota} requests per ${decision.policy.windowSeconds} s`, decision);
  }
  return keyId;
}
