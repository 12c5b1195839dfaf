import type { H3Event } from 'h3';
import { addressCounter, clientAddress } from '../access/client-address.ts';
import { type RateDecision, rateLimitField, rateLimitPolicyField } from '../access/rate-limit.ts';
import { ForbiddenError, RateLimitedError, UnauthorizedError } from '../core/errors/errors.ts';
import type { GatewayServices } from './context.ts';

/*
 * Each step answers in the same turn when it can (a key from the snapshot, a local quota) and
 * gives a promise only when it must wait (a re-read of the keys, a quota shared through Redis),
 * so a request that waits for nothing is answered without a turn of the event loop.
 */

/**
 * The gate in front of every key-gated route: a valid Bearer key (else 401 UNAUTHORIZED), then
 * its quota (else 429 RATE_LIMITED). Requests without a valid key are counted per client
 * address, so a flood of them turns into 429s and cannot use up what keyed callers need; keyed
 * callers are counted per key id, and their answers carry the RateLimit fields. Returns the key id.
 */
export function requireApiKey(event: H3Event, services: GatewayServices): string | Promise<string> {
  const keyId = authenticate(event, services);
  if (typeof keyId !== 'string') return keyId.then((id) => chargedThen(chargeQuota(event, services, id, 1), id));
  return chargedThen(chargeQuota(event, services, keyId, 1), keyId);
}

/**
 * The gate of the mirror routes: {@link requireApiKey} (401, 429: a request costs one unit of the
 * key's quota either way; a file's bytes cost more, charged by its route), then the key's `mirror` scope (`mvr apikey create --scope mirror`), else
 * 403 FORBIDDEN: an ordinary key may look records up, not carry off whole builds. Returns the key id.
 */
export async function requireMirrorKey(event: H3Event, services: GatewayServices): Promise<string> {
  const keyId = await requireApiKey(event, services);
  if (!services.apiKeys.hasScope(keyId, 'mirror'))
    throw new ForbiddenError(`API key ${keyId} may not mirror builds: only a key made with "mvr apikey create --scope mirror" may`);
  return keyId;
}

function chargedThen(charged: void | Promise<void>, keyId: string): string | Promise<string> {
  return charged instanceof Promise ? charged.then(() => keyId) : keyId;
}

/**
 * The key check alone (401, and the per-address quota for requests without a valid key); returns
 * the key id. A request without a valid key pays its address's budget before any look at the key
 * table: one with a key the snapshot decides pays as it is refused; one whose id the snapshot does
 * not hold pays before that id is looked up, so an address over its budget is 429 and costs the
 * table nothing.
 */
export function authenticate(event: H3Event, services: GatewayServices): string | Promise<string> {
  let keyId: string | Promise<string>;
  try {
    // node:http keeps the first of repeated Authorization fields; the edge refuses a repeat (edge.ts).
    keyId = services.apiKeys.authenticate(event.node.req.headers.authorization, () => spendAddressBudget(event, services));
  } catch (error) {
    return refused(event, services, error);
  }
  // A promise is a look at the table, paid for already: its refusal is thrown as it is.
  if (typeof keyId !== 'string') return keyId.then((id) => noted(event, id));
  return noted(event, keyId);
}

function noted(event: H3Event, keyId: string): string {
  event.context.keyId = keyId;
  return keyId;
}

/**
 * A request without a valid key, refused from the snapshot: counted against its client's quota
 * (429 past it), else refused as it was.
 */
function refused(event: H3Event, services: GatewayServices, error: unknown): never | Promise<never> {
  if (!(error instanceof UnauthorizedError)) throw error;
  const spent = spendAddressBudget(event, services);
  if (spent instanceof Promise) return spent.then(() => Promise.reject(error));
  throw error;
}

/**
 * One request without a valid key, counted against its client's quota: RATE_LIMITED (429) past it.
 * The client is the peer, or the address trusted proxies name (access/client-address.ts); an IPv6
 * client is counted by its /64.
 */
function spendAddressBudget(event: H3Event, services: GatewayServices): void | Promise<void> {
  const perAddress = services.limits.perAddress;
  if (!perAddress) return;
  const req = event.node.req;
  const decision = perAddress.take(addressCounter(clientAddress(req.socket.remoteAddress, req.headers, services.trustedProxies)));
  if (decision instanceof Promise) return decision.then(overBudget);
  overBudget(decision);
}

function overBudget(decision: RateDecision): void {
  if (!decision.allowed) throw new RateLimitedError('too many requests without a valid API key from this address', decision.resetSeconds);
}

/**
 * Counts `count` units against the key's quota (a request one, a batch one per domain, a mirror
 * file one per MiB: core/limits.ts quotaUnitsOf), setting the RateLimit fields; 429 past it.
 */
export function chargeQuota(event: H3Event, services: GatewayServices, keyId: string, count: number): void | Promise<void> {
  const perKey = services.limits.perKey;
  if (!perKey) return;
  const decision = perKey.take(keyId, count);
  if (decision instanceof Promise) return decision.then((d) => applyQuota(event, keyId, d, count));
  applyQuota(event, keyId, decision, count);
}

function applyQuota(event: H3Event, keyId: string, decision: RateDecision, count: number): void {
  const res = event.node.res;
  res.setHeader('ratelimit-policy', rateLimitPolicyField(decision.policy));
  res.setHeader('ratelimit', rateLimitField(decision));
  if (!decision.allowed) {
    const { quota, windowSeconds } = decision.policy;
    // An answer costing more than the whole quota is never granted: say so, rather than "wait".
    const cost =
      count > 1 ? ` (this answer costs ${count} more${count > quota ? ', more than the whole quota: ask for a shorter range' : ''})` : '';
    throw new RateLimitedError(`API key ${keyId} is over its quota of ${quota} units per ${windowSeconds} s${cost}`, decision.resetSeconds);
  }
}
