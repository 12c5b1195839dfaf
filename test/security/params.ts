/**
 * Registered into front-door.test.ts (one gateway for the HTTP front door).
 *
 * Repeated and encoded `domain` parameters, and hostile spellings of a host: whatever the query
 * holds, the answer is 400 INVALID_DOMAIN or a 200 whose `domain` is the lowercase A-label ASCII
 * form that normalizeDomain gives for the decoded value, and which is the stored record of that
 * very domain or an `unverified` answer: never another domain's record.
 *
 * Decisions tested here:
 * - Parameter names are case-sensitive: only `domain` counts (`DOMAIN`, `Domain` are ignored).
 *   Names are form-decoded like values (`%64omain` is `domain`), so a duplicate spelled that way
 *   is still a duplicate.
 * - The query is decoded once (URLSearchParams). The value then goes through WHATWG URL host
 *   parsing, which percent-decodes a host once more (`%61cme` is `acme`, as in a browser): a
 *   double-encoded `%2561cme-outdoor.example` therefore names acme-outdoor.example. Accepted:
 *   it can only ever be that domain's own record; a third level of encoding is refused.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { normalizeDomain } from '../../core/domain.ts';
import type { Reply, TestGateway } from '../support/gateway.ts';
import { expectProblem } from '../support/gateway-expect.ts';
import type { FrontDoor } from './checks.ts';

const ACME = 'acme-outdoor.example';
const ASCII_DOMAIN = /^[a-z0-9.-]+$/;

let g: TestGateway;
let records: Map<string, Buffer>;

/** `GET /v1/verify?<query>` with the query exactly as given (fetch keeps percent-escapes as they are). */
const query = (q: string) => g.request(`/v1/verify?${q}`);

/** Percent-encodes every UTF-8 byte that is not unreserved, so the target is plain ASCII. */
function encodeValue(value: string): string {
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
function expectAnswerFor(value: string, r: Reply): void {
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

async function expectRecord(r: Reply, domain: string): Promise<void> {
  expect(r.status, r.text.slice(0, 200)).toBe(200);
  expect(r.json.domain).toBe(domain);
  expect(r.bytes.equals(records.get(domain)!)).toBe(true);
}

export function paramsSuite(get: () => FrontDoor): void {
  describe('repeated and encoded parameters', () => {
    beforeAll(() => {
      ({ g, records } = get());
      expect(records.has(ACME)).toBe(true);
    });

    describe('repeated parameters', () => {
      it('domain given twice is 400 INVALID_DOMAIN, even with the same value', async () => {
        for (const q of [
          `domain=${ACME}&domain=${ACME}`,
          `domain=${ACME}&domain=gadget-hub.example`,
          `domain=${ACME}&domain=`,
          `domain=&domain=${ACME}`,
          `domain=${ACME}&domain`,
        ]) {
          const p = expectProblem(await query(q), 400, 'INVALID_DOMAIN');
          expect(p.detail, q).toContain('2 times');
        }
        const three = expectProblem(await query(`domain=a.example&domain=b.example&domain=${ACME}`), 400, 'INVALID_DOMAIN');
        expect(three.detail).toContain('3 times');
      });

      it('only the exact name "domain" counts: DOMAIN and Domain are other parameters', async () => {
        await expectRecord(await query(`domain=${ACME}&DOMAIN=gadget-hub.example`), ACME);
        await expectRecord(await query(`DOMAIN=gadget-hub.example&domain=${ACME}`), ACME);
        await expectRecord(await query(`Domain=evil.example&domain=${ACME}&dOmAiN=x.example`), ACME);
        for (const q of [
          `DOMAIN=${ACME}`,
          `Domain=${ACME}`,
          `domain%20=${ACME}`,
          `domain+=${ACME}`,
          `domain[]=${ACME}`,
          `domains=${ACME}`,
          `xdomain=${ACME}`,
          '',
        ]) {
          const p = expectProblem(await query(q), 400, 'INVALID_DOMAIN');
          expect(p.detail, q).toBe('query parameter "domain" is required');
        }
      });

      it('a percent-encoded name is form-decoded: %64omain is domain, so it counts (and can be a duplicate)', async () => {
        await expectRecord(await query(`%64omain=${ACME}`), ACME);
        expectProblem(await query(`%64omain=${ACME}&domain=gadget-hub.example`), 400, 'INVALID_DOMAIN');
      });

      it('empty, valueless and separator-smuggled values', async () => {
        for (const q of ['domain=', 'domain', 'domain=%20', '&&domain=&&']) expectProblem(await query(q), 400, 'INVALID_DOMAIN');
        await expectRecord(await query(`&&domain=${ACME}&&`), ACME);
        // `;` is not a separator, and an encoded `&`/`=` is part of the value: no second parameter appears.
        expectAnswerFor(`${ACME};domain=evil.example`, await query(`domain=${ACME};domain=evil.example`));
        expectAnswerFor(`${ACME}&domain=evil.example`, await query(`domain=${ACME}%26domain%3Devil.example`));
        expectAnswerFor(`evil.example&domain=${ACME}`, await query(`domain=evil.example%26domain%3D${ACME}`));
      });
    });

    describe('percent-encoding', () => {
      it('a percent-encoded host is the same record', async () => {
        await expectRecord(await query('domain=%61cme-outdoor.example'), ACME);
        await expectRecord(await query('domain=%61%63%6d%65%2d%6f%75%74%64%6f%6f%72%2e%65%78%61%6d%70%6c%65'), ACME);
        await expectRecord(await query('domain=ACME%2DOUTDOOR%2EEXAMPLE'), ACME);
        await expectRecord(await query(`domain=${encodeURIComponent(`https://www.${ACME}/tents?x=1&domain=evil.example`)}`), ACME);
      });

      it("double encoding is 400 or acme-outdoor.example's own record, never another record; triple encoding is 400", async () => {
        for (const q of ['domain=%2561cme-outdoor.example', 'domain=acme-outdoor%252eexample', 'domain=%2541CME-OUTDOOR.EXAMPLE']) {
          const r = await query(q);
          expect([200, 400], q).toContain(r.status);
          if (r.status === 400) expectProblem(r, 400, 'INVALID_DOMAIN');
          else await expectRecord(r, ACME);
          expectAnswerFor(new URLSearchParams(q).get('domain')!, r);
        }
        for (const q of ['domain=%252561cme-outdoor.example', 'domain=acme-outdoor%25252eexample'])
          expectProblem(await query(q), 400, 'INVALID_DOMAIN');
      });

      it('invalid UTF-8, overlong sequences, NUL, CR/LF and an encoded slash are 400', async () => {
        for (const q of [
          'domain=%FF',
          'domain=acme-outdoor%C0%AEexample',
          'domain=acme-outdoor.example%00',
          'domain=acme-outdoor.example%0D%0A',
          'domain=%0Aacme-outdoor.example',
          'domain=acme-outdoor.example%2Fx%0D%0ASet-Cookie:%20a=b',
          'domain=%09acme-outdoor.example',
          'domain=acme%7Foutdoor.example',
        ]) {
          expectProblem(await query(q), 400, 'INVALID_DOMAIN');
        }
      });
    });

    describe("'+' and spaces", () => {
      it('a + is a space: surrounding ones are trimmed, inner ones refused; an encoded + is a literal + (refused)', async () => {
        await expectRecord(await query(`domain=${ACME}+`), ACME);
        await expectRecord(await query(`domain=++${ACME}++`), ACME);
        await expectRecord(await query(`domain=%20${ACME}%20`), ACME);
        for (const q of [
          'domain=acme+outdoor.example',
          'domain=acme%20outdoor.example',
          'domain=acme%2Boutdoor.example',
          'domain=acme-outdoor.example%2B',
          'domain=acme-outdoor%E3%80%80example',
          'domain=acme%EF%BB%BF-outdoor.example',
        ]) {
          expectProblem(await query(q), 400, 'INVALID_DOMAIN');
        }
      });
    });

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
        expect(r.bytes.equals(records.get(ACME)!)).toBe(false);
        expect(r.json.status).toBe('unverified');
        if (aLabel) expect(r.json.domain).toBe(aLabel);
        if (/[^\x00-\x7f]/.test(value) && value !== 'acme\u200Boutdoor.example') expect(r.json.domain).toContain('xn--');
      });

      it('a U-label and its decomposed (NFD) spelling are the same audited record', async () => {
        const aLabel = 'xn--bcher-haus-9db.example';
        expect(records.has(aLabel)).toBe(true);
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
