/** Assertions on what the gateway answers and logs, shared by every suite that starts one. */
import { expect } from 'vitest';
import type { Reply, TestGateway } from './gateway.ts';

/** An RFC 9457 problem: status, code, the five members exactly, problem+json, never cached. */
export function expectProblem(
  r: Reply,
  status: number,
  code: string,
): { type: string; title: string; status: number; detail: string; code: string } {
  expect({ status: r.status, code: r.json?.code }).toEqual({ status, code });
  expect(r.headers.get('content-type')).toBe('application/problem+json');
  expect(r.headers.get('cache-control')).toBe('no-store');
  expect(Object.keys(r.json).sort()).toEqual(['code', 'detail', 'status', 'title', 'type']);
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
