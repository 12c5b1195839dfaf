/**
 * The `domain` query parameter is read without a parser in its common form (`?domain=<value>`
 * with nothing to decode); every target must give what URLSearchParams gives: the same domain,
 * or an INVALID_DOMAIN error with the same message, the first time and again (from memory).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizeDomain } from '../../core/domain.ts';
import { domainFromTarget } from '../../gateway/routes/verify.ts';

/** The reference: URLSearchParams, exactly one `domain`, normalized. */
function reference(target: string): { domain?: string; error?: string } {
  const q = target.indexOf('?');
  const values = new URLSearchParams(q < 0 ? '' : target.slice(q + 1)).getAll('domain');
  if (values.length !== 1) return { error: values.length === 0 ? 'query parameter "domain" is required' : `query parameter "domain" is given ${values.length} times; give it once` };
  try {
    return { domain: normalizeDomain(values[0]!) };
  } catch (error) {
    return { error: `query parameter "domain": ${(error as Error).message}` };
  }
}

function actual(target: string): { domain?: string; error?: string } {
  try {
    return { domain: domainFromTarget(target) };
  } catch (error) {
    expect((error as { code?: string }).code).toBe('INVALID_DOMAIN');
    return { error: (error as Error).message };
  }
}

const piece = fc.constantFrom('domain', 'domain=', 'Shop.Example.com', 'xn--bcher-kva.example', 'b%C3%BCcher.example', '&', '=', '%', '%2', '+', ' ', '.', 'www.', 'co.uk', 'a', '-', '?', '/', '#', ':443', '%00', 'https://');

describe('domainFromTarget', () => {
  it.each([
    ['/v1/verify?domain=acme-outdoor.example', { domain: 'acme-outdoor.example' }],
    ['/v1/verify?domain=Shop.Example.co.uk', { domain: 'example.co.uk' }],
    ['/v1/verify?domain=b%C3%BCcher.example', { domain: 'xn--bcher-kva.example' }],
    ['/v1/verify?domain=a.example&domain=b.example', { error: 'query parameter "domain" is given 2 times; give it once' }],
    ['/v1/verify', { error: 'query parameter "domain" is required' }],
    ['/v1/verify?domain=', { error: reference('/v1/verify?domain=').error }],
  ])('%s', (target, expected) => {
    expect(actual(target)).toEqual(expected);
    // Asked again: a valid target is answered from memory now, with the same result.
    expect(actual(target)).toEqual(expected);
    expect(reference(target)).toEqual(expected);
  });

  it('agrees with URLSearchParams on any target built from query pieces', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 8 }), fc.string({ maxLength: 12 }), (pieces, tail) => {
        const target = `/v1/verify?${pieces.join('')}${tail}`;
        const expected = reference(target);
        expect(actual(target)).toEqual(expected);
        expect(actual(target)).toEqual(expected);
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (value) => {
        const target = `/v1/verify?domain=${value}`;
        const expected = reference(target);
        expect(actual(target)).toEqual(expected);
        expect(actual(target)).toEqual(expected);
      }),
      { numRuns: 2000 },
    );
  });
});
