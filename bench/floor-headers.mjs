// The headers of the gateway's answer to a hot record, as the floors send them (bench/*-floor.mjs):
// the same names in the same order, with values of the same lengths as the shipped gateway's in
// the benchmark (its quotas at 1,000,000,000 units a minute), so that a floor writes the same
// bytes as the gateway and the difference between them is work, not bytes.

import { createHash } from 'node:crypto';

/** A flat [name, value, ...] list for `res.writeHead(200, list)`: `body`'s answer. */
export function gatewayHeaders(body) {
  return [
    'x-content-type-options',
    'nosniff',
    'ratelimit-policy',
    '"per-key";q=1000000000;w=60',
    'ratelimit',
    '"per-key";r=999999999;t=60',
    'content-type',
    'application/json',
    'cache-control',
    'public, max-age=60, s-maxage=300',
    'vary',
    'Authorization',
    'etag',
    `"${createHash('sha256').update(body).digest('base64url')}"`,
    'content-length',
    String(body.length),
  ];
}
