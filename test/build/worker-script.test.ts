import { readFile, rename, stat, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { buildWorkerScript, readStamp, type BundleStamp } from '../../builder/worker-script.ts';

async function stampOf(path: string): Promise<BundleStamp> {
  const text = await readFile(path, 'utf8');
  expect(text.startsWith('// mvr-worker-inputs {')).toBe(true);
  const stamp = readStamp(text);
  expect(stamp).not.toBeNull();
  return stamp!;
}

/** Replaces the bundle as a build would (whole, renamed into place), so builds of other test files running now never see half a file. */
async function replaceBundle(path: string, text: string): Promise<void> {
  await writeFile(`${path}.test.tmp`, text);
  await rename(`${path}.test.tmp`, path);
}

describe('the build workers\' bundle', () => {
  it('holds the worker and its dependencies, says what it was made from, and runs in a worker thread', async () => {
    const url = await buildWorkerScript();
    expect(url.pathname).toMatch(/node_modules\/\.cache\/merchant-verify\/build-worker-[0-9a-f]{12}\.mjs$/);
    const stamp = await stampOf(fileURLToPath(url));
    expect(stamp.inputs).toContain('builder/worker.ts');
    expect(stamp.inputs).toContain('core/audit.ts');
    expect(stamp.inputs.some((p) => p.startsWith('node_modules/zod/'))).toBe(true);
    // The workers only parse: the file listing (fast-glob) stays out of their bundle.
    expect(stamp.inputs.some((p) => p.includes('fast-glob'))).toBe(false);
    expect(stamp.sha256).toMatch(/^[0-9a-f]{64}$/);

    // A real worker on it: a run of JSONL lines as bytes (CRLF, a blank line, no newline at the
    // end), the one that is not JSON reported with its line and column.
    const worker = new Worker(url, { workerData: { stagingDir: '/nonexistent-mvr-test', signingKey: null, context: { issuer: 'x', schemaUrl: 'https://x.example/schemas/verification/v1', issuedAt: '2026-11-01T00:00:00.000Z' } } });
    try {
      const reply = await new Promise<{ id: number; audits: number; written: number; problems: { source: string; message: string }[] }>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
        const bytes = new TextEncoder().encode('\r\n  \r\n{"domain" 1}');
        worker.postMessage({ id: 1, run: { shown: 'a.jsonl', firstLine: 7, lines: 3, bytes } }, [bytes.buffer]);
      });
      expect(reply).toMatchObject({ id: 1, audits: 1, written: 0 });
      expect(reply.problems).toEqual([{ source: 'a.jsonl:9', message: expect.stringMatching(/^invalid JSON column 11: Expected ':' after property name/) }]);
    } finally {
      await worker.terminate();
    }
  });

  it('is reused while its inputs are unchanged, and made again when they differ from its stamp', async () => {
    const path = fileURLToPath(await buildWorkerScript());
    const before = await stat(path);
    await buildWorkerScript();
    const reused = await stat(path);
    // Not bundled again: the same file, untouched.
    expect([reused.ino, reused.mtimeMs]).toEqual([before.ino, before.mtimeMs]);

    // A stamp that no longer matches the inputs (as after an edit of a source or an upgrade of a package).
    const text = await readFile(path, 'utf8');
    const stamp = await stampOf(path);
    await replaceBundle(path, text.replace(stamp.sha256, '0'.repeat(64)));
    await buildWorkerScript();
    expect((await stampOf(path)).sha256).toBe(stamp.sha256);

    // A damaged stamp, and a bundle from before stamps (or any file without one), are made again too.
    await replaceBundle(path, text.replace('"sha256":', '"sha256"'));
    await buildWorkerScript();
    expect((await stampOf(path)).sha256).toBe(stamp.sha256);
    await replaceBundle(path, text.slice(text.indexOf('\n') + 1));
    await buildWorkerScript();
    expect((await stampOf(path)).sha256).toBe(stamp.sha256);
  });
});
