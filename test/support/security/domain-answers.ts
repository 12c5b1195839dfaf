/**
 * What the `domain` parameter tests of the front door check an answer against, on the shared
 * gateway (useFrontDoor takes it in a suite's beforeAll): the invariant for one decoded value,
 * and the stored record of a domain.
 */
import { beforeAll, expect } from 'vitest';
import { normalizeDomain } from '../../../core/rules/domain.ts';
import type { Reply, TestGateway } from '../gateway.ts';
import { expectProblem } from '../gateway-expect.ts';
import type { FrontDoor } from './checks.ts';

export const ACME = 'acme-outdoor.example';
const ASCII_DOMAIN = /^[a-z0-9.-]+$/;

let g: TestGateway;
let records: Map<string, Buffer>;

/** In a suite: takes the front door's gateway and records before its tests. */
export function useFrontDoor(get: () => FrontDoor): void {
  beforeAll(() => {
    ({ g, records } = get());
    expect(records.has(ACME)).toBe(true);
  });
}

/** The records the front door serves, by domain. */
export const storedRecords = (): ReadonlyMap<string, Buffer> => records;

/** `GET /v1/verify?<query>` with the query exactly as given (fetch keeps percent-escapes as they are). */
export const query = (q: string) => g.request(`/v1/verify?${q}`);

/** Percent-encodes every UTF-8 byte that is not unreserved, so the target is plain ASCII. */
export function encodeValue(value: string): string {
  let out = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9._~-]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function oracle(value: string): string | null {
  try {
    return normalizeDomain(value);
  } catch {
    return null;
  }
}

/**
 * The invariant for one answer to a (decoded) `domain` value: 400 INVALID_DOMAIN exactly when the
 * normalizer refuses it, else 200 for normalizeDomain(value), lowercase A-label ASCII, the stored
 * bytes when there is a record, else an unverified answer for that domain.
 */
export function expectAnswerFor(value: string, r: Reply): void {
  const expected = oracle(value);
  const label = JSON.stringify(value);
  if (expected === null) {
    expect(r.status, label).toBe(400);
    expectProblem(r, 400, 'INVALID_DOMAIN');
    return;
  }
  expect(r.status, `${label} -> ${expected}: ${r.text.slice(0, 200)}`).toBe(200);
  expect(r.json.domain, label).toBe(expected);
  expect(r.json.domain, label).toMatch(ASCII_DOMAIN);
  const stored = records.get(expected);
  if (stored) expect(r.bytes.equals(stored), `${label}: the stored bytes of ${expected}`).toBe(true);
  else {
    expect(r.json.status, label).toBe('unverified');
    expect(r.json.score, label).toBeNull();
  }
}

export async function expectRecord(r: Reply, domain: string): Promise<void> {
  expect(r.status, r.text.slice(0, 200)).toBe(200);
  expect(r.json.domain).toBe(domain);
  expect(r.bytes.equals(records.get(domain)!)).toBe(true);
}
