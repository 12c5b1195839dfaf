import { defineEventHandler } from 'h3';
import { NotFoundError } from '../../core/errors/errors.ts';
import { strongEtag } from '../../core/etag.ts';
import { readVerifyPage } from '../../core/verify-page.ts';
import { conditionalAnswer, sendAnswer } from '../answer.ts';
import { cacheHeaders } from '../cache-policy.ts';

/** The page runs only its own script and asks only this origin (the key set, `GET /v1/verify`). */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** `GET /verify` and `/verify/app.js`: the verify page, public, from what `npm run build` made. */
export function verifyPageRoutes() {
  // Read, and their entity tags computed, once.
  const files = readVerifyPage().then(
    (f) => f && { html: { body: f.html, etag: strongEtag(f.html) }, script: { body: f.script, etag: strongEtag(f.script) } },
  );
  const serve = (which: 'html' | 'script') =>
    defineEventHandler(async (event) => {
      const file = (await files)?.[which];
      if (!file) throw new NotFoundError(`${event.path} (the verify page was not built: run "npm run build")`);
      const headers = {
        'content-type': which === 'html' ? 'text/html; charset=utf-8' : 'text/javascript; charset=utf-8',
        ...cacheHeaders(which === 'html' ? '/verify' : '/verify/app.js'),
        'content-security-policy': CSP,
      };
      return sendAnswer(event, conditionalAnswer(event, headers, file.etag, file.body));
    });
  return { page: serve('html'), script: serve('script') };
}
