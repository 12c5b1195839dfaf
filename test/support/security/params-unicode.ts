/**
 * Registered into front-door.test.ts (one gateway for the HTTP front door), after params.ts and
 * under the same heading: Unicode spellings of a host, and a fast-check property over any decoded
 * `domain` value. Whatever the query holds, the answer is 400 INVALID_DOMAIN or a 200 whose
 * `domain` is the lowercase A-label ASCII form that normalizeDomain gives, and which is the stored
 * record of that very domain or an `unverified` answer: never another domain's record.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectProblem } from '../gateway-expect.ts';
import type { FrontDoor } from './checks.ts';
import { ACME, encodeValue, expectAnswerFor, expectRecord, query, storedRecords, useFrontDoor } from './domain-answers.ts';

export function paramsUnicodeSuite(get: () => FrontDoor): void {
  describe('repeated and encoded parameters', () => {
    useFrontDoor(get);

    describe('Unicode spellings', () => {
      const same: [string, string][] = [
        ['fullwidth dot U+FF0E', 'acme-outdoor\uFF0Eexample'],
        ['ideographic full stop U+3002', 'acme-outdoor\u3002example'],
        ['halfwidth ideographic full stop U+FF61', 'acme-outdoor\uFF61example'],
        ['trailing ideographic full stop', `${ACME}\u3002`],
        ['fullwidth letters', '\uFF41\uFF43\uFF4D\uFF45-outdoor.example'],
        ['soft hyphen U+00AD inside', 'acme-out\u00ADdoor.example'],
        ['soft hyphen U+00AD at both ends', `\u00AD${ACME}\u00AD`],
        ['word joiner U+2060', 'acme\u2060-outdoor.example'],
        ['no-break space around', `\u00A0${ACME}\u00A0`],
        ['upper case', 'ACME-OUTDOOR.EXAMPLE'],
      ];
      it.each(same)('%s maps to the same record (IDNA mapping, as WHATWG URL does)', async (_name, value) => {
        const r = await query(`domain=${encodeValue(value)}`);
        await expectRecord(r, ACME);
        expectAnswerFor(value, r);
      });

      const confusables: [string, string, string][] = [
        ['Cyrillic а (U+0430) for a', '\u0430cme-outdoor.example', 'xn--cme-outdoor-xij.example'],
        ['Cyrillic о (U+043E) for o', 'acme-\u043Eutdoor.example', 'xn--acme-utdoor-vnj.example'],
        ['Greek ο (U+03BF) for o', 'acme-\u03BFutdoor.example', ''],
        ['two Cyrillic letters (mixed script)', '\u0430cm\u0435-outdoor.example', ''],
        ['an all-Cyrillic label', '\u0430\u0441\u043C\u0435.example', ''],
        ['a Cyrillic letter in the TLD', 'acme-outdoor.ex\u0430mple', 'acme-outdoor.xn--exmple-4nf'],
        ['the A-label of the Cyrillic spoof, given directly', 'XN--CME-OUTDOOR-XIJ.EXAMPLE', 'xn--cme-outdoor-xij.example'],
        ['zero-width space U+200B (mapped away: another name)', 'acme\u200Boutdoor.example', 'acmeoutdoor.example'],
        ['dotless ı (U+0131)', 'acme-outdoor.\u0131xample', ''],
        ['combining acute on e', 'acme-outdoor.e\u0301xample', ''],
      ];
      it.each(confusables)('%s comes back as its own domain, never as acme-outdoor.example', async (_name, value, aLabel) => {
        const r = await query(`domain=${encodeValue(value)}`);
        expectAnswerFor(value, r);
        expect(r.status).toBe(200);
        expect(r.json.domain).not.toBe(ACME);
        expect(r.bytes.equals(storedRecords().get(ACME)!)).toBe(false);
        expect(r.json.status).toBe('unverified');
        if (aLabel) expect(r.json.domain).toBe(aLabel);
        if (/[^\x00-\x7f]/.test(value) && value !== 'acme\u200Boutdoor.example') expect(r.json.domain).toContain('xn--');
      });

      it('a U-label and its decomposed (NFD) spelling are the same audited record', async () => {
        const aLabel = 'xn--bcher-haus-9db.example';
        expect(storedRecords().has(aLabel)).toBe(true);
        for (const value of [
          'bücher-haus.example',
          'bu\u0308cher-haus.example',
          'BÜCHER-HAUS.EXAMPLE',
          aLabel,
          'ｘｎ--bcher-haus-9db.example',
        ]) {
          const r = await query(`domain=${encodeValue(value)}`);
          await expectRecord(r, aLabel);
          expectAnswerFor(value, r);
        }
      });

      it('joiners that IDNA refuses (ZWJ U+200D, ZWNJ U+200C between Latin letters), a BOM inside, a one-dot leader and a bad A-label are 400', async () => {
        for (const value of [
          'acme\u200Doutdoor.example',
          'acme\u200Coutdoor.example',
          'acme\uFEFF-outdoor.example',
          'acme-outdoor\u2024example',
          'xn--cme-outdoor-hgj.example',
          'acme-outdoor.example\u200D',
        ]) {
          const r = await query(`domain=${encodeValue(value)}`);
          expectProblem(r, 400, 'INVALID_DOMAIN');
          expectAnswerFor(value, r);
        }
      });
    });

    describe('property: any decoded value', () => {
      const FRAGMENTS = [
        'acme-outdoor',
        'example',
        'gadget-hub',
        'co.uk',
        'myshopify.com',
        'github.io',
        'xn--',
        'bücher-haus',
        'www',
        '.',
        '..',
        '\uFF0E',
        '\u3002',
        '\uFF61',
        '-',
        '_',
        '%',
        '%61',
        '%2561',
        '%2e',
        '%00',
        '+',
        ' ',
        '\t',
        '@',
        ':',
        ':443',
        '/',
        '\\',
        '?',
        '#',
        '&',
        '=',
        ';',
        '\u0430',
        '\u043E',
        '\u03BF',
        '\u0131',
        '\u0301',
        '\u200B',
        '\u200C',
        '\u200D',
        '\u00AD',
        '\u2060',
        '\uFEFF',
        '\u00A0',
        '\u3000',
        '\uFF41',
        '\uFFFD',
        'https://',
        'HTTP://',
        'user:pw@',
        '[::1]',
        '127.0.0.1',
        'ACME',
        'Ⓐ',
        'ß',
        'ς',
        '\u0644\u0627',
      ];
      const value = fc
        .array(
          fc.oneof(
            { weight: 4, arbitrary: fc.constantFrom(...FRAGMENTS) },
            { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 3 }) },
          ),
          { minLength: 1, maxLength: 8 },
        )
        .map((parts) => Buffer.from(parts.join(''), 'utf8').toString('utf8')); // well-formed UTF-16 only

      it('200 only for normalizeDomain(value), ASCII A-label, own record or unverified; else 400 INVALID_DOMAIN', async () => {
        await fc.assert(
          fc.asyncProperty(value, async (v) => {
            const r = await query(`domain=${encodeValue(v)}`);
            expect(r.status).toBeLessThan(500);
            expectAnswerFor(v, r);
          }),
          { numRuns: 150 },
        );
      });
    });
  });
}
