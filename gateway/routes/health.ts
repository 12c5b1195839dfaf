import { defineEventHandler } from 'h3';
import type { Health } from '../../core/schemas/health.ts';
import { sendAnswer } from '../answer.ts';
import { cacheHeaders } from '../cache-policy.ts';
import type { GatewayServices } from '../context.ts';

/**
 * `GET /healthz`: liveness (always 200 while the process serves) with the store's state in the
 * body, so a probe never restarts a healthy process because the records folder is briefly gone.
 * `status` is `ok` or `degraded`.
 */
export function healthRoute(services: GatewayServices) {
  return defineEventHandler((event) => {
    const health = services.records.health();
    const { entries, bytes, limit } = health.cache;
    const body: Health = {
      status: health.ok ? 'ok' : 'degraded',
      records: {
        ok: health.records.ok,
        build: health.records.build,
        error: health.records.error ? 'records unavailable' : null,
        failures: health.records.failures,
        refused: health.records.refused?.build ?? null,
      },
      key_set: health.keySet,
      cache: { entries, bytes, limit },
      api_keys: services.apiKeys.liveKeys,
    };
    return sendAnswer(event, {
      status: 200,
      headers: { 'content-type': 'application/json', ...cacheHeaders('/healthz') },
      body: JSON.stringify(body),
    });
  });
}
