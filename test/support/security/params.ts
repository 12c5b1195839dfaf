/**
 * Registered into front-door.test.ts (one gateway for the HTTP front door).
 *
 * Repeated and encoded `domain` parameters (Unicode spellings of a host are params-unicode.ts):
 * whatever the query holds, the answer is 400 INVALID_DOMAIN or a 200 whose `domain` is the lowercase A-label ASCII
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
import { describe, expect, it } from 'vitest';
import { expectProblem } from '../gateway-expect.ts';
import type { FrontDoor } from './checks.ts';
import { ACME, expectAnswerFor, expectRecord, query, useFrontDoor } from './domain-answers.ts';

export function paramsSuite(get: () => FrontDoor): void {
  describe('repeated and encoded parameters', () => {
    useFrontDoor(get);

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
  });
}
