import type { H3Event } from 'h3';
import { UnauthorizedError } from '../api-keys.ts';
import type { GatewayContext } from '../context.ts';
import { RateLimitedError } from '../rate-limit.ts';

/**
 * The gate in front of every key-gated route: a valid Bearer key, then its quota. Requests
 * without a valid key are counted per client address, so a flood of them turns into cheap 429s
 * and cannot use up what keyed callers need; keyed callers are counted per key id.
 * Returns the key id; throws UNAUTHORIZED or RATE_LIMITED.
 */
export function authorize(event: H3Event, ctx: GatewayContext): string {
  let keyId: string;
  try {
    keyId = ctx.apiKeys.authenticate(event.node.req.headers.authorization);
  } catch (error) {
    if (error instanceof UnauthorizedError && ctx.limits.perAddress) {
      const decision = ctx.limits.perAddress.take(event.node.req.socket.remoteAddress ?? 'unknown');
      if (!decision.allowed) throw new RateLimitedError('too many requests without a valid API key from this address', decision);
    }
    throw error;
  }
  event.context.keyId = keyId;
  if (ctx.limits.perKey) {
    const decision = ctx.limits.perKey.take(keyId);
    event.context.rateLimit = decision;
    if (!decision.allowed) throw new RateLimitedError(`API key ${keyId} is over its quota of ${decision.policy.quota} requests per ${decision.policy.windowSeconds} s`, decision);
  }
  return keyId;
}
