import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const TSX_ENTRY = new URL('./worker-entry.mjs', import.meta.url);
const ENTRY = 'builder/worker.ts';
/** Changed whenever the bundling options below change, so that a bundle made with the old ones is made again. */
const OPTIONS_TAG = 'deps-inline-1';
const STAMP_PREFIX = '// mvr-worker-inputs ';

/**
 * The file each build worker runs. Loading TypeScript through tsx costs every worker thread
 * about 40 MB more than plain JavaScript (its own loader thread and transform caches), so the
 * worker's sources are bundled with esbuild into `node_modules/.cache/merchant-verify/`, their
 * dependencies (zod, tldts, canonicalize) included: a worker then loads one file instead of a
 * few hundred modules, and three workers start in 145-200 ms instead of 320-400 ms (measured on
 * this 2-core machine), which is most of a small build's fixed cost.
 *
 * The bundle's first line records what it was made from (esbuild's version, these options, and
 * a SHA-256 over the content of every input file esbuild read); a build reuses it when that
 * still matches, reading and hashing those files (a few milliseconds) instead of bundling again
 * (70-100 ms). Contents, not modification times: npm gives every installed file the same one.
 * Where the folder cannot be written (a read-only install), workers load the TypeScript through
 * tsx instead: slower to start, same results.
 */
export async function buildWorkerScript(): Promise<URL> {
  const dir = join(ROOT, 'node_modules/.cache/merchant-verify');
  // One bundle per checkout: a checkout whose node_modules is a link to another's (as CI
  // workspaces and the workflow tests make) shares the cache folder, and its stamp differs.
  const out = join(dir, `build-worker-${createHash('sha256').update(ROOT).digest('hex').slice(0, 12)}.mjs`);
  try {
    const { build, version } = await import('esbuild');
    if (await isCurrent(out, version)) return new URL(`file://${out}`);
    await mkdir(dir, { recursive: true });
    const tmp = `${out}.${process.pid}.tmp`;
    const result = await build({
      entryPoints: [join(ROOT, ENTRY)],
      absWorkingDir: ROOT,
      outfile: tmp,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      // CommonJS dependencies bundled into an ES module call require() for Node's built-ins.
      banner: { js: "import { createRequire as __mvrCreateRequire } from 'node:module';\nconst require = __mvrCreateRequire(import.meta.url);" },
      metafile: true,
      write: false,
      logLevel: 'silent',
    });
    const inputs = Object.keys(result.metafile.inputs).sort();
    const stamp: BundleStamp = { esbuild: version, options: OPTIONS_TAG, inputs, sha256: await digest(inputs) };
    // Written whole under a temporary name and renamed into place: two builds bundling at once
    // never run a half-written file, and the stamp always describes the code beneath it.
    await writeFile(tmp, `${STAMP_PREFIX}${JSON.stringify(stamp)}\n${result.outputFiles[0]!.text}`);
    await rename(tmp, out);
    return new URL(`file://${out}`);
  } catch {
    return TSX_ENTRY;
  }
}

/** What a bundle's first line says it was made from. */
export interface BundleStamp {
  esbuild: string;
  options: string;
  /** Every file esbuild read, relative to the project, sorted. */
  inputs: string[];
  /** SHA-256 over each input's path and content ({@link digest}). */
  sha256: string;
}

/** The stamp on the first line of a bundle's text, or null when it has none (or a damaged one). */
export function readStamp(text: string): BundleStamp | null {
  if (!text.startsWith(STAMP_PREFIX)) return null;
  try {
    const stamp = JSON.parse(text.slice(STAMP_PREFIX.length, text.indexOf('\n'))) as Partial<BundleStamp> | null;
    const ok = typeof stamp?.esbuild === 'string' && typeof stamp.options === 'string' && Array.isArray(stamp.inputs) && typeof stamp.sha256 === 'string';
    return ok ? (stamp as BundleStamp) : null;
  } catch {
    return null;
  }
}

/** Whether the bundle at `out` was made by this esbuild, with these options, from the input files as they are now. */
async function isCurrent(out: string, esbuildVersion: string): Promise<boolean> {
  try {
    const stamp = readStamp(await readFile(out, 'utf8'));
    if (!stamp || stamp.esbuild !== esbuildVersion || stamp.options !== OPTIONS_TAG) return false;
    return (await digest(stamp.inputs)) === stamp.sha256;
  } catch {
    // No bundle yet, or an input gone (a file renamed or a package removed): bundle again.
    return false;
  }
}

/** SHA-256 over each input's path and content, in order (paths are relative to the project, as esbuild's metafile gives them). */
async function digest(inputs: string[]): Promise<string> {
  const contents = await Promise.all(inputs.map((path) => readFile(join(ROOT, path))));
  const hash = createHash('sha256');
  inputs.forEach((path, i) => {
    const content = contents[i]!;
    hash.update(`${path}\0${content.length}\0`).update(content);
  });
  return hash.digest('hex');
}
