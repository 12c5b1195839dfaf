/** Assertions on what the gateway answers and logs, shared by every suite that starts one. */
import { expect } from 'vitest';
import type { LogLine } from '../../gateway/context.ts';
import type { Reply, TestGateway } from './gateway.ts';

/** The members of a problem document: a server failure's also names the request its cause is logged under. */
export function problemMembers(status: number): string[] {
  return status >= 500 ? ['code', 'detail', 'request_id', 'status', 'title', 'type'] : ['code', 'detail', 'status', 'title', 'type'];
}

/** An RFC 9457 problem: status, code, the five members exactly (and `request_id` for a 5xx), problem+json, never cached. */
export function expectProblem(
  r: Reply,
  status: number,
  code: string,
): { type: string; title: string; status: number; detail: string; code: string; request_id?: string } {
  expect({ status: r.status, code: r.json?.code }).toEqual({ status, code });
  expect(r.headers.get('content-type')).toBe('application/problem+json');
  expect(r.headers.get('cache-control')).toBe('no-store');
  expect(Object.keys(r.json).sort()).toEqual(problemMembers(status));
  expect(r.json.status).toBe(status);
  expect(typeof r.json.type).toBe('string');
  expect(typeof r.json.title).toBe('string');
  expect(typeof r.json.detail).toBe('string');
  expect(r.json.detail.length).toBeGreaterThan(0);
  return r.json;
}

/**
 * No log line carries an API key, a secret part of one, or an Authorization header value that
 * was sent (including wrong keys).
 */
export function expectNoSecretsInLogs(t: Pick<TestGateway, 'secrets' | 'sentAuthorizations' | 'logs'>): void {
  const needles = new Set<string>();
  for (const key of t.secrets) {
    needles.add(key);
    const secret = key.split('_').slice(2).join('_');
    if (secret.length >= 16) needles.add(secret);
  }
  for (const value of t.sentAuthorizations) {
    needles.add(value);
    const token = value.replace(/^\S+\s+/, '').trim();
    if (token.length >= 16) needles.add(token);
  }
  expect(t.logs.length).toBeGreaterThan(0);
  for (const line of t.logs) {
    const text = JSON.stringify(line);
    for (const needle of needles) {
      if (text.includes(needle)) throw new Error(`log line leaks a credential: ${text}`);
    }
    expect(text.toLowerCase()).not.toContain('authorization');
  }
}

/**
 * Answers say what, logs say where: a server failure's problem document (`status`, `code`) says
 * none of `where` (paths, bucket names, object keys, URLs, system errors), and the gateway's log
 * line of that request, found by the answer's `request_id`, says each of them (a string or a
 * pattern). `problem` is the problem document itself, for one inside a batch answer; the log line is returned.
 */
export function expectCauseLogged(
  t: Pick<TestGateway, 'logs'>,
  problem: { request_id?: string; code: string },
  where: (string | RegExp)[],
): LogLine {
  const text = JSON.stringify(problem);
  for (const w of where) {
    if (typeof w === 'string') expect(text, 'the answer').not.toContain(w);
    else expect(text, 'the answer').not.toMatch(w);
  }
  expect(problem.request_id).toMatch(/^[0-9a-f-]{36}$/);
  const line = t.logs.find((l) => l.request_id === problem.request_id && l.msg !== 'request');
  expect(line, `a log line with request_id ${problem.request_id}`).toBeDefined();
  expect(line).toMatchObject({ code: problem.code });
  for (const w of where) {
    if (typeof w === 'string') expect(String(line!.error), 'the log line').toContain(w);
    else expect(String(line!.error), 'the log line').toMatch(w);
  }
  return line!;
}

/** What a start on a bucket or an origin without the operator's keys says: the flag, the variable, and why. */
export const NO_TRUSTED_KEYS = /--trusted-keys FILE \(or MVR_TRUSTED_KEYS\).*anyone with write access could change/;
