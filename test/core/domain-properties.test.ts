/** normalizeDomain's properties over generated inputs (fast-check), and its memo of recent inputs changing no answer. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { URL as WhatwgURL } from 'whatwg-url';
import { MvrError } from '../../core/errors/errors.ts';
import { normalizeDomain, plainHost } from '../../core/rules/domain.ts';
import { thrown } from '../support/thrown.ts';

const DOMAINISH = /^[a-z0-9.-]+$/;

/** Strings that look like domains, URLs, or neither. */
const domainish = fc.oneof(
  fc.domain(),
  fc.webUrl(),
  fc.webUrl({ withQueryParameters: true, withFragments: true }),
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.string({ unit: 'grapheme' }),
  fc
    .array(
      fc.oneof(
        fc.constantFrom(
          'www',
          'shop',
          'co',
          'uk',
          'com',
          'io',
          'github',
          'bücher',
          'xn--bcher-kva',
          'a-b',
          '-x',
          'x-',
          '',
          'EXAMPLE',
          '123',
          '0x7f',
          '_',
        ),
        fc.string({ maxLength: 6 }),
      ),
      {
        minLength: 1,
        maxLength: 6,
      },
    )
    .map((labels) => labels.join('.')),
  fc
    .tuple(
      fc.constantFrom('', 'http://', 'https://', 'ftp://', 'HTTPS://', 'user@', '//'),
      fc.domain(),
      fc.constantFrom('', '.', '..', ':80', ':99999', '/x', '?q', '#f', '\r\n', ' '),
    )
    .map(([a, b, c]) => a + b + c),
);

describe('normalizeDomain properties (fast-check)', () => {
  it('is idempotent, yields /^[a-z0-9.-]+$/ of at most 253, and throws only INVALID_DOMAIN', () => {
    fc.assert(
      fc.property(domainish, (input) => {
        let out: string;
        try {
          out = normalizeDomain(input);
        } catch (error) {
          expect(error).toBeInstanceOf(MvrError);
          expect((error as MvrError).code).toBe('INVALID_DOMAIN');
          return;
        }
        expect(out).toMatch(DOMAINISH);
        expect(out.length).toBeLessThanOrEqual(253);
        expect(normalizeDomain(out)).toBe(out);
      }),
      { numRuns: 600 },
    );
  });

  it('fc.domain() values under a known TLD normalize to a suffix of their lowercase form', () => {
    fc.assert(
      fc.property(fc.domain(), (d) => {
        let out: string;
        try {
          out = normalizeDomain(d);
        } catch (error) {
          expect((error as MvrError).code).toBe('INVALID_DOMAIN');
          return;
        }
        const lower = d.toLowerCase();
        expect(lower === out || lower.endsWith(`.${out}`)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('any non-string input is INVALID_DOMAIN', () => {
    fc.assert(
      fc.property(
        fc.anything().filter((x) => typeof x !== 'string'),
        (x) => {
          expect(thrown(() => normalizeDomain(x))).toMatchObject({ code: 'INVALID_DOMAIN' });
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('normalizeDomain: the memo of recent inputs changes no answer', () => {
  it('gives the same answer, or the same refusal, however often and in whatever order an input is asked, past the memo size', () => {
    const inputs = ['https://WWW.Shop.Example.co.uk:443/x?y', 'co.uk', 'bücher.example', 'localhost', 'store.myshopify.com'];
    const answer = (input: string) => {
      try {
        return normalizeDomain(input);
      } catch (error) {
        return `refused: ${(error as MvrError).code}`;
      }
    };
    const first = inputs.map(answer);
    expect(first).toEqual([
      'example.co.uk',
      'refused: INVALID_DOMAIN',
      'xn--bcher-kva.example',
      'refused: INVALID_DOMAIN',
      'store.myshopify.com',
    ]);
    // More distinct inputs than the memo holds, so it is cleared at least once in between.
    for (let i = 0; i < 12_000; i++) normalizeDomain(`shop-${i}.example`);
    for (let round = 0; round < 3; round++) {
      expect([...inputs].reverse().map(answer).reverse()).toEqual(first);
    }
    expect(normalizeDomain('shop-7.example')).toBe('shop-7.example');
  });

  it('takes the plain path only where the WHATWG parser gives the same host, and takes it for plain hosts', () => {
    const hostish = fc.string({
      unit: fc.constantFrom('a', 'b', 'x', 'n', 'X', 'N', '-', '.', '0', '1', '7', '9', 'f', 'é'),
      minLength: 1,
      maxLength: 14,
    });
    let plain = 0;
    fc.assert(
      fc.property(fc.oneof(hostish, domainish), (input) => {
        const fast = plainHost(input);
        if (fast === null) return;
        plain++;
        expect(new WhatwgURL(`http://${input}`).hostname).toBe(fast);
      }),
      { numRuns: 5000 },
    );
    expect(plain).toBeGreaterThan(1000);
    expect(plainHost('Shop-1.Example.co.uk')).toBe('shop-1.example.co.uk');
    for (const input of [
      'xn--bcher-kva.example',
      'a.XN--x.b',
      'a.0x7f',
      'a.0X',
      '1.2.3.4',
      'a.123.',
      'bücher.example',
      'a b.c',
      'a%41.b',
      'a:80',
    ])
      expect(plainHost(input), input).toBeNull();
  });
});
