/**
 * Assertions shared by the security suites, on responses read over raw TCP (raw-http.ts).
 */
import { expect } from 'vitest';
import type { TestGateway } from '../gateway.ts';
import { problemMembers } from '../gateway-expect.ts';
import { type Exchange, header, type RawResponse } from '../raw-http.ts';

/**
 * A gateway problem document: the status, `application/problem+json`, `Cache-Control: no-store`,
 * exactly {type,title,status,detail,code} (and request_id for a 5xx) with `status` equal to the HTTP status, and the
 * headers the status calls for (WWW-Authenticate on 401, Allow on 405). HEAD: no body, but the
 * GET's Content-Length.
 */
export function expectRawProblem(r: RawResponse, status: number, code?: string, opts: { head?: boolean } = {}): void {
  const what = r.head.split('\r\n')[0];
  expect(r.status, what).toBe(status);
  expect(header(r, 'content-type'), what).toBe('application/problem+json');
  expect(header(r, 'cache-control'), what).toBe('no-store');
  if (status === 401) expect(header(r, 'www-authenticate'), what).toMatch(/^Bearer realm="merchant-verify"/);
  if (status === 405) expect(header(r, 'allow'), what).toMatch(/^[A-Z]+(, [A-Z]+)*$/);
  if (opts.head) {
    expect(r.body.length, what).toBe(0);
    expect(Number(header(r, 'content-length')), what).toBeGreaterThan(0);
    return;
  }
  const body = JSON.parse(r.body.toString('utf8')) as Record<string, unknown>;
  expect(Object.keys(body).sort(), what).toEqual(problemMembers(status));
  expect(body.status, what).toBe(status);
  for (const m of ['type', 'title', 'detail', 'code']) expect(typeof body[m], `${what} ${m}`).toBe('string');
  if (code) expect(body.code, what).toBe(code);
}

/**
 * Node's HTTP parser refused the request: exactly one 4xx of `statuses`, `Connection: close`, and
 * the socket closed by the server. Node 20 sends no body (the request never reached the
 * gateway); should the gateway answer these itself one day (a `clientError` handler), the body
 * must be a problem document of the same status.
 */
export function expectParserRejection(x: Exchange, statuses: number[] = [400]): RawResponse {
  expect(x.timedOut, 'the server answered and closed in time').toBe(false);
  expect(x.responses.length, 'exactly one response').toBe(1);
  const r = x.responses[0]!;
  expect(statuses, r.head).toContain(r.status);
  expect(header(r, 'connection')?.toLowerCase(), r.head).toBe('close');
  expect(x.closed, 'socket closed after the rejection').toBe(true);
  expect(x.rest.length, 'no bytes after the rejection').toBe(0);
  if (r.body.length > 0) expectRawProblem(r, r.status);
  return r;
}

/** Never a 5xx. */
export function expectNo5xx(x: Exchange): void {
  for (const r of [...x.responses, ...x.interim]) expect(r.status, r.head).toBeLessThan(500);
}

/** What front-door.test.ts shares with the suites it registers: one gateway on a built project. */
export interface FrontDoor {
  g: TestGateway;
  /** The live build's record bytes by domain. */
  records: Map<string, Buffer>;
}
