/**
 * Property: whatever a caller puts in `domain`, the gateway answers 200 or 400 INVALID_DOMAIN,
 * never a 5xx, and a 200 is either the stored record of that very domain or an `unverified`
 * answer, for a normalized `[a-z0-9.-]` domain (so no path can climb out of the records folder).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizeDomain } from '../../core/rules/domain.ts';
import { cleanup, type Reply, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { expectNoSecretsInLogs } from '../support/gateway-expect.ts';
import { liveRecords } from '../support/outputs.ts';
import { makeProject } from '../support/project.ts';

let g: TestGateway;
let records: Map<string, Buffer>;

beforeAll(async () => {
  const project = await makeProject();
  records = await liveRecords(project);
  g = await startTestGateway(project);
});

afterAll(async () => {
  expectNoSecretsInLogs(g);
  await cleanup();
});

const TRAVERSAL = [
  '../',
  '..\\',
  '..%2f',
  '..%2F',
  '%2e%2e%2f',
  '%2f',
  '%5c',
  '\u0000',
  '%00',
  '/',
  '//',
  '.',
  '..',
  '%2e',
  '\r\n',
  '@',
  ':',
  '#',
  '?',
  '&domain=',
  ' ',
];

const sampleDomain = () => fc.constantFrom(...records.keys());
const decorate = (d: fc.Arbitrary<string>) =>
  fc
    .tuple(
      fc.constantFrom('', 'https://', 'http://www.', 'HTTPS://WWW.', 'user:pw@', 'shop.'),
      d,
      fc.constantFrom('', '.', ':443', '/x?q=1#f', '/', ':8080/a/b'),
    )
    .map(([a, b, c]) => a + b + c);

/** Raw `domain` values: random text, URLs, traversal fragments, controls, very long input, and real forms of sample domains. */
const domainValue = () =>
  fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.string({ unit: 'grapheme', maxLength: 30 }),
    fc.webUrl(),
    fc.domain(),
    decorate(fc.domain()),
    decorate(sampleDomain()),
    fc
      .array(
        fc.oneof(
          fc.constantFrom(...TRAVERSAL),
          fc.domain(),
          fc.constantFrom('etc', 'passwd', 'records', 'current', 'keys', 'api-keys.json'),
        ),
        { minLength: 1, maxLength: 8 },
      )
      .map((parts) => parts.join('')),
    fc.tuple(fc.constantFrom(...TRAVERSAL), sampleDomain()).map(([t, d]) => `${t}${d}`),
    fc
      .integer({ min: 2000, max: 4000 })
      .chain((n) => fc.constantFrom('a'.repeat(n), `${'a.'.repeat(n / 2)}example`, `${'%2e%2e%2f'.repeat(Math.floor(n / 9))}etc`)),
  );

/** How the value travels: percent-encoded by URLSearchParams, or pasted raw into the query (fetch encodes what it must). */
const query = () =>
  fc.oneof(
    domainValue().map((value) => ({ path: `/v1/verify?${new URLSearchParams({ domain: value }).toString()}`, value })),
    domainValue().map((value) => ({ path: `/v1/verify?domain=${value}`, value: null })),
  );

function check(r: Reply, sent: string | null): void {
  if (r.status >= 500) throw new Error(`5xx for ${JSON.stringify(sent)}: ${r.status} ${r.text}`);
  expect([200, 400]).toContain(r.status);
  if (r.status === 400) {
    expect(r.json.code).toBe('INVALID_DOMAIN');
    expect(r.headers.get('content-type')).toBe('application/problem+json');
    return;
  }
  const domain = r.json.domain as string;
  expect(domain).toMatch(/^[a-z0-9.-]+$/);
  expect(domain).not.toContain('..');
  const stored = records.get(domain);
  if (stored) expect(r.bytes.equals(stored)).toBe(true);
  else expect(r.json.status).toBe('unverified');
}

describe('random domain values', () => {
  it('never give a 5xx, and a 200 is the stored record or an unverified answer for a clean domain', async () => {
    await fc.assert(
      fc.asyncProperty(query(), async ({ path, value }) => {
        const r = await g.request(path);
        check(r, value ?? path);
        if (value !== null) {
          // Percent-encoded values reach the gateway exactly: 200 exactly when the value normalizes, to that domain.
          const seen = new URLSearchParams(path.slice(path.indexOf('?') + 1)).get('domain')!;
          let expected: string | null = null;
          try {
            expected = normalizeDomain(seen);
          } catch {
            expected = null;
          }
          expect(r.status === 200 ? r.json.domain : null).toBe(expected);
        }
      }),
      { numRuns: 150 },
    );
    expect(g.logs.filter((l) => l.level === 'error')).toEqual([]);
  });

  it('hand-picked hostile values', async () => {
    const values = [
      '../../etc/passwd',
      '..%2F..%2Fetc%2Fpasswd',
      '%2e%2e',
      '%252e%252e%252f',
      '....//....//etc',
      'acme-outdoor.example/../../../keys/api-keys.json',
      'acme-outdoor.example%00.json',
      'acme-outdoor.example\u0000',
      'file:///etc/passwd',
      'javascript:alert(1)',
      '\\\\server\\share',
      'xn--.example',
      'xn--zz.example',
      '\u2025.example',
      'a\u3002acme-outdoor\uff0eexample',
      'ACME-OUTDOOR.EXAMPLE\u200b',
      '[::ffff:127.0.0.1]',
      'http://[::1]:80/',
      `${'x'.repeat(63)}.${'y'.repeat(63)}.${'z'.repeat(63)}.${'w'.repeat(57)}.example`,
      'a'.repeat(2048),
      'a'.repeat(2049),
    ];
    for (const value of values) {
      check(await g.request(`/v1/verify?${new URLSearchParams({ domain: value }).toString()}`), value);
      check(await g.verify(value), value);
    }
  });
});
