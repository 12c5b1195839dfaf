/**
 * The one lock module (core/file-lock.ts) where a holder loses its lock: a holder stopped (SIGSTOP)
 * past the stale limit has its lock broken, and the revocation made meanwhile survives its SIGCONT
 * and write (the state's generation refuses it, LOCK_LOST); of several processes that find one
 * abandoned lock, exactly one takes it; a lock naming a live pid that got reused is taken, one whose
 * holder lives is not. Real processes, the compiled modules the CLI runs; the stale limit is a
 * setting the test sets to 0, and each step waits on an event (a line, a process state), not a time.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { apiKeyFile, createApiKey, listApiKeys, revokeApiKey } from '../../access/api-keys.ts';
import { processStart } from '../../core/file-lock.ts';
import { ROOT, removeTempDirs, tempDir } from '../support/project.ts';
import { waitFor, waitForExit } from '../support/wait.ts';

afterAll(removeTempDirs);

// The compiled modules `npm run build` writes (dist/, beside the sources of the same name).
const dist = (source: string) => JSON.stringify(join(ROOT, 'dist', source.replace(/\.ts$/, '.js')));

/** A node process running `code` (an ES module) with its output collected; `lines` resolves on each line it writes. */
function child(code: string) {
  const proc = spawn(process.execPath, ['--input-type=module', '-e', code], {
    stdio: ['pipe', 'pipe', 'pipe'],
  }) as ChildProcessWithoutNullStreams;
  let out = '';
  let err = '';
  proc.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
  proc.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
  const line = async (text: string) => waitFor(() => out.split('\n').includes(text), `"${text}" from the child (stderr: ${err})`, 15_000);
  return { proc, line, output: () => out, errors: () => err };
}

/** Whether a process is stopped (state T in /proc/PID/stat). */
const stopped = async (pid: number) => (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]?.startsWith('T') ?? false;

describe('a holder that lost its lock', () => {
  it('stopped past the stale limit while it adds a key: a revocation made meanwhile survives its SIGCONT and write (LOCK_LOST)', async () => {
    const file = join(await tempDir('mvr-lock-'), 'api-keys.json');
    const doomed = await createApiKey(file, 'to be revoked');
    // The child adds a key under the lock, says so, and waits for a line before it writes.
    const holder = child(`
      import { changeApiKeyFile } from ${dist('access/api-keys.ts')};
      import { once } from 'node:events';
      try {
        await changeApiKeyFile(${JSON.stringify(file)}, async (data) => {
          data.keys.push({ id: 'stalledadd', label: 'stalled', sha256: 'x', created: '2026-11-01T00:00:00.000Z', revoked: null });
          process.stdout.write('holding\\n');
          await once(process.stdin, 'data');
        });
        process.stdout.write('written\\n');
      } catch (error) {
        process.stdout.write(String(error.code) + '\\n');
      }
      process.exit(0);
    `);
    await holder.line('holding');
    holder.proc.kill('SIGSTOP');
    await waitFor(() => stopped(holder.proc.pid as number), 'the holder stopped');
    holder.proc.stdin.write('go on\n'); // read only once it runs again

    // Its lock is past the stale limit (0 here): the revocation breaks it and is written.
    const revoked = await apiKeyFile(file, { staleMs: 0 }).revoke(doomed.entry.id, '2026-11-02T00:00:00.000Z');
    expect(revoked.revoked).not.toBeNull();

    holder.proc.kill('SIGCONT');
    await holder.line('LOCK_LOST');
    await waitForExit(holder.proc, 'the stalled holder', holder.errors);
    const keys = await listApiKeys(file);
    expect(keys.find((k) => k.id === doomed.entry.id)?.revoked).toBe('2026-11-02T00:00:00.000Z');
    expect(keys.map((k) => k.id)).not.toContain('stalledadd');
    // The next change goes through: the lock and the generation are as the revocation left them.
    await createApiKey(file, 'after');
    expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({ generation: 3 });
  });
});

describe('an abandoned lock', () => {
  const TAKERS = 4;

  it(`found by ${TAKERS} processes at once: exactly one takes it`, async () => {
    const dir = await tempDir('mvr-lock-');
    const lock = join(dir, 'state.lock');
    const gone = spawn(process.execPath, ['-e', '']);
    await waitForExit(gone, 'a process that exits at once');
    await writeFile(lock, JSON.stringify({ pid: gone.pid, host: hostname(), token: 'left-behind', started: null }));
    // Each taker waits for a line on stdin before it tries, so all try together; a winner holds until its stdin ends.
    const takers = Array.from({ length: TAKERS }, () =>
      child(`
        import { takeLock } from ${dist('core/file-lock.ts')};
        import { once } from 'node:events';
        process.stdout.write('ready\\n');
        await once(process.stdin, 'data');
        try {
          await takeLock(${JSON.stringify(lock)}, { waitMs: 0, staleMs: Infinity });
          process.stdout.write('took\\n');
          await once(process.stdin, 'end');
        } catch (error) {
          process.stdout.write(String(error.code) + '\\n');
        }
        process.exit(0);
      `),
    );
    for (const t of takers) await t.line('ready');
    for (const t of takers) t.proc.stdin.write('go\n');
    await waitFor(() => takers.every((t) => /took|STORE_UNAVAILABLE/.test(t.output())), 'every taker done');
    expect(takers.filter((t) => t.output().includes('took'))).toHaveLength(1);
    expect(takers.filter((t) => t.output().includes('STORE_UNAVAILABLE'))).toHaveLength(TAKERS - 1);
    for (const t of takers) t.proc.stdin.end();
    for (const t of takers) await waitForExit(t.proc, 'a taker', t.errors);
  });

  it('a live pid started after the holder (the pid reused) does not hold it; the live holder itself does', async () => {
    const file = join(await tempDir('mvr-lock-'), 'api-keys.json');
    const other = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
    await once(other, 'spawn');
    try {
      const pid = other.pid as number;
      const lock = { pid, host: hostname(), token: 'someone' };
      await writeFile(`${file}.lock`, JSON.stringify({ ...lock, started: '1' }));
      await createApiKey(apiKeyFile(file, { waitMs: 0 }), 'over a reused pid');
      expect((await listApiKeys(file)).map((k) => k.label)).toEqual(['over a reused pid']);

      await writeFile(`${file}.lock`, JSON.stringify({ ...lock, started: processStart(pid) }));
      await expect(revokeApiKey(apiKeyFile(file, { waitMs: 0 }), (await listApiKeys(file))[0]!.id)).rejects.toMatchObject({
        code: 'STORE_UNAVAILABLE',
      });
    } finally {
      other.kill();
    }
  });
});
