import type { H3Event } from 'h3';
import { basename } from 'node:path';
import { reply } from '../http/reply.ts';
import type { GatewayContext } from '../context.ts';

/**
 * `GET /healthz`: liveness (always 200 while the process serves) with the store's state in the
 * body, so a probe never restarts a healthy process because the records folder is briefly gone.
 * `status` is `ok` or `degraded`.
 */
export async function handleHealth(event: H3Event, ctx: GatewayContext): Promise<void> {
  const records = ctx.store.source.describe();
  const keys = ctx.store.keys.state();
  const body = {
    status: records.ok && keys.ok ? 'ok' : 'degraded',
    records: { ok: records.ok, build: records.build ? basename(records.build) : null, error: records.error ? 'records unavailable' : null },
    key_set: { ok: keys.ok, keys: keys.keys },
    cache: ctx.store.stats(),
    api_keys: ctx.apiKeys.liveKeys,
  };
  await reply(event, 200, { 'content-type': 'application/json', 'cache-control': 'no-store' }, JSON.stringify(body));
}
