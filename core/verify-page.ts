import { copyFile, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where `npm run build` puts the verify page (`index.html`, and `app.js` with the verifier
 * inside): dist/verify/. Compiled, this module is dist/core/verify-page.js; run from the
 * TypeScript sources (the tests), it is core/verify-page.ts, and the page is still in dist/.
 */
export const VERIFY_PAGE_DIR = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? '../dist/verify/' : '../verify/', import.meta.url));
export const VERIFY_PAGE_FILES = ['index.html', 'app.js'] as const;

/** The page's files, read once; null when the page was not built. */
export async function readVerifyPage(): Promise<{ html: Buffer; script: Buffer } | null> {
  try {
    const [html, script] = await Promise.all(VERIFY_PAGE_FILES.map((name) => readFile(join(VERIFY_PAGE_DIR, name))));
    return { html: html!, script: script! };
  } catch {
    return null;
  }
}

/** Copies the page into a public folder (`public/verify/`), so a CDN serves it too; false when it was not built. */
export async function copyVerifyPage(publicDir: string): Promise<boolean> {
  await mkdir(join(publicDir, 'verify'), { recursive: true });
  try {
    await Promise.all(VERIFY_PAGE_FILES.map((name) => copyFile(join(VERIFY_PAGE_DIR, name), join(publicDir, 'verify', name))));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}
