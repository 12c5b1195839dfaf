import { getRequestHeader, type H3Event, setResponseHeaders } from 'h3';
import { rateLimitHeaders } from '../access/rate-limit.ts';
import { RateLimitedError, UnauthorizedError } from '../core/errors.ts';
import type { GatewayServices } from './context.ts';

/**
 * The gate in front of every key-gated route: a valid Bearer key (else 401 UNAUTHORIZED), then
 * its quota (else 429 RATE_LIMITED). Requests without a valid key are counted per client
 * address, so a flood of them turns into 429s and cannot use up what keyed callers need; keyed
 * callers are counted per key id, and their answers carry the RateLimit fields. Returns the key id.
 */
export async function requireApiKey(event: H3Event, services: GatewayServices): Promise<string> {
  const keyId = await authenticate(event, services);
  await chargeQuota(event, services, keyId, 1);
  return keyId;
}

/** The key check alone (401, and the per-address quota for requests without a valid key); returns the key id. */
export async function authenticate(event: H3Event, services: GatewayServices): Promise<string> {
  let keyId: string;
  try {
    keyId = await services.apiKeys.authenticate(getRequestHeader(event, 'authorization'));
  } catch (error) {
    const perAddress = services.limits.perAddress;
    if (error instanceof UnauthorizedError && perAddress) {
      const decision = await perAddress.take(event.node.req.socket.remoteAddress ?? 'unknown');
      if (!decision.allowed)
        throw new RateLimitedError('too many requests without a valid API key from this address', decision.resetSeconds);
    }
    throw error;
  }
  event.context.keyId = keyId;
  return keyId;
}

/** Counts `count` requests against the key's quota (a batch counts each domain), setting the RateLimit fields; 429 past it. */
export async function chargeQuota(event: H3Event, services: GatewayServices, keyId: string, count: number): Promise<void> {
  const perKey = services.limits.perKey;
  if (perKey) {
    const decision = await perKey.take(keyId, count);
    setResponseHeaders(event, rateLimitHeaders(decision));
    if (!decision.allowed) {
      throw new RateLimitedError(
        `API key ${keyId} is over its quota of ${decision.policy.quota} requests per ${decision.policy.windowSeconds} s`,
        decision.resetSeconds,
      );
    }
  }
}
