/**
 * Long commands show progress without a terminal too: `build`, `publish` and `pull`, run through
 * pipes as CI runs them, write a plain progress line on stderr every MVR_PROGRESS_MS (shortened
 * here from its 5 s default) and a last "done" line; with `--json`, one JSON object a line. On a
 * terminal the line is redrawn in place instead.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPhases } from '../../cli/commands/build.ts';
import { createProgress } from '../../cli/progress.ts';
import { buildArgs, lines, runCli } from '../support/cli.ts';
import { camelCaseInOutput } from '../support/json-members.ts';
import { makeProject, type Project, removeTempDirs, tempDir } from '../support/project.ts';
import { startS3, type TestS3 } from '../support/s3-server.ts';
import { sleep, waitFor } from '../support/wait.ts';

const BUCKET = 'mvr-progress';
const FAST = { MVR_PROGRESS_MS: '5' };

let s3: TestS3;
let project: Project;
beforeAll(async () => {
  s3 = await startS3([BUCKET]);
  project = await makeProject({ sign: true, build: false });
});
afterAll(async () => {
  await s3.close();
  await removeTempDirs();
});

/** The progress lines of a command's stderr: plain `<command>: ...` lines, or the JSON ones. */
const plain = (stderr: string, command: string) => lines(stderr).filter((l) => l.startsWith(`${command}: `));
const json = (stderr: string) =>
  lines(stderr)
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('progress without a terminal', () => {
  it('mvr build: plain lines on stderr while it runs, then a done line; no escape codes or carriage returns', async () => {
    const r = await runCli(buildArgs(project), FAST);
    expect(r.code, r.stderr).toBe(0);
    const progress = plain(r.stderr, 'build');
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress.at(-1)).toMatch(/^build: done, 100% of input, 33 records, [\d,]+\/s \(\d+ s\)$/);
    expect(r.stderr).not.toMatch(/[\r\x1b]/);
    expect(r.stdout).toMatch(/^built 33 records/);
  });

  it('mvr build --json: one JSON object a line on stderr, the last one done; stdout holds only the summary', async () => {
    // A day later than the build above: the same --now would be the same build, already live.
    const r = await runCli(buildArgs(project, ['--json'], '2026-11-02T00:00:00.000Z'), FAST);
    expect(r.code, r.stderr).toBe(0);
    const progress = json(r.stderr);
    expect(progress.length).toBeGreaterThanOrEqual(2);
    for (const p of progress) expect(p).toMatchObject({ progress: 'build', elapsed_ms: expect.any(Number) });
    expect(progress.at(-1)).toMatchObject({ done: true, records: 33, bytes_read: expect.any(Number), total_bytes: expect.any(Number) });
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, records: 33 });
  });

  it('mvr publish and mvr pull: progress lines, plain and JSON, ending with done', async () => {
    const to = `s3://${BUCKET}/prod`;
    const published = await runCli(['publish', '--to', to, '--records', project.recordsDir, '--public', project.publicDir], {
      ...FAST,
      ...s3.env,
    });
    expect(published.code, published.stderr).toBe(0);
    expect(plain(published.stderr, 'publish').at(-1)).toMatch(
      /^publish: done, (\d+) of \1 objects, ([\d.]+) of \2 MB, about 0 s left \(\d+ s\)$/,
    );

    const again = await runCli(['publish', '--to', to, '--records', project.recordsDir, '--public', project.publicDir, '--json'], {
      ...FAST,
      ...s3.env,
    });
    expect(again.code, again.stderr).toBe(0);
    expect(camelCaseInOutput(again)).toEqual([]);
    // Run again: everything but the manifest and live.json (always written, last) is up already.
    const done = json(again.stderr).at(-1) as Record<string, number>;
    expect(done).toMatchObject({ progress: 'publish', done: true, uploaded: 2, seconds_left: 0 });
    expect(done.objects).toBe(done.total_objects);
    expect(done.bytes).toBe(done.total_bytes);
    expect(done.skipped).toBe(Number(done.objects) - 2);
    expect(JSON.parse(again.stdout)).toMatchObject({ ok: true, uploaded: 2, skipped: done.skipped, objects: done.objects });

    // Two pulls side by side, each into a folder of its own.
    const pull = async (extra: string[]) =>
      runCli(['pull', '--from', to, '--records', join(await tempDir('mvr-pull-'), 'records'), ...extra], { ...FAST, ...s3.env });
    const [pulled, pulledPlain] = await Promise.all([pull(['--json']), pull([])]);
    expect(pulled.code, pulled.stderr).toBe(0);
    expect(camelCaseInOutput(pulled)).toEqual([]);
    expect(json(pulled.stderr).at(-1)).toMatchObject({ progress: 'pull', done: true, builds: 2, total: 2 }); // the two builds above
    expect(pulledPlain.code, pulledPlain.stderr).toBe(0);
    expect(plain(pulledPlain.stderr, 'pull').at(-1)).toMatch(/^pull: done, 2 of 2 kept builds, [\d.]+ MB \(\d+ s\)$/);
  });

  it('mvr build: each phase announced once, in order, plain and JSON (the records, then what was silent after them)', async () => {
    // Each build later than the ones above: the same inputs and --now would be the same build.
    const phased = await runCli(buildArgs(project, ['--json'], '2026-11-03T00:00:00.000Z'), FAST);
    expect(phased.code, phased.stderr).toBe(0);
    const phases = json(phased.stderr).flatMap((p) => (typeof p.phase === 'string' ? [p.phase] : []));
    // Run last here: this project has earlier builds (so change feeds) and no log key (so no log phase).
    expect(phases.filter((p, i) => p !== phases[i - 1])).toEqual(['records', 'index', 'map', 'changes', 'key_set', 'swap', 'prune']);
    const r = await runCli(buildArgs(project, [], '2026-11-04T00:00:00.000Z'), FAST);
    expect(r.code, r.stderr).toBe(0);
    const announced = [
      'signing records',
      'writing the index',
      'writing the domain map',
      'writing the change feeds',
      'writing the key set',
      'swapping the build in',
      'removing builds no longer kept',
    ];
    const at = announced.map((text) => plain(r.stderr, 'build').findIndex((l) => l.startsWith(`build: ${text} (`)));
    expect(
      at.every((i) => i >= 0),
      r.stderr,
    ).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
  });
});

describe('progress on a terminal', () => {
  it('redraws one line in place, writes nothing on its own, and clears the line when it stops', async () => {
    const written: string[] = [];
    const terminal = { isTTY: true, write: (s: string) => written.push(s) } as unknown as NodeJS.WriteStream;
    const progress = createProgress({ command: 'build', json: false, intervalMs: 1, stream: terminal });
    progress.update({ text: '10% of input, 5 records', fields: { records: 5 } });
    await sleep(20); // past the 1 ms redraw interval
    progress.update({ text: '100% of input, 50 records', fields: { records: 50 } });
    progress.finish();
    progress.stop();
    expect(written).toEqual(['\r\x1b[2Kbuild: 10% of input, 5 records', '\r\x1b[2Kbuild: 100% of input, 50 records', '\r\x1b[2K']);
  });

  it('while records are signed, the time left is the input still to do at the rate measured so far; later phases say what they do', () => {
    const written: string[] = [];
    const terminal = { isTTY: true, write: (s: string) => written.push(s) } as unknown as NodeJS.WriteStream;
    let now = 1_000;
    const phases = buildPhases(createProgress({ command: 'build', json: false, intervalMs: 1, stream: terminal }), () => now);
    phases.begin('records');
    now += 10_000; // a quarter of the input done in 10 s: 30 s left
    phases.records({ records: 250, bytesRead: 400, bytesDone: 250, totalBytes: 1000, elapsedMs: 10_000 });
    now += 110_000; // half done in 120 s: 2 min left
    phases.records({ records: 500, bytesRead: 600, bytesDone: 500, totalBytes: 1000, elapsedMs: 120_000 });
    phases.records({ records: 1000, bytesRead: 1000, bytesDone: 1000, totalBytes: 1000, elapsedMs: 120_000 });
    phases.begin('map');
    expect(written).toEqual([
      '\r\x1b[2Kbuild: signing records',
      '\r\x1b[2Kbuild: signing records: 25% of input, 250 records, 25/s, about 30 s left',
      '\r\x1b[2Kbuild: signing records: 50% of input, 500 records, 4/s, about 2 min left',
      '\r\x1b[2Kbuild: signing records: 100% of input, 1,000 records, 8/s',
      '\r\x1b[2Kbuild: writing the domain map (1,000 records signed)',
    ]);
  });

  it('without a terminal it writes a line each interval even when nothing changed (a heartbeat), from an injected clock', async () => {
    const written: string[] = [];
    const pipe = { isTTY: false, write: (s: string) => written.push(s) } as unknown as NodeJS.WriteStream;
    let now = 0;
    const progress = createProgress({ command: 'publish', json: false, intervalMs: 2, stream: pipe, clock: () => (now += 4000) });
    await waitFor(() => written.length >= 2, 'two heartbeat lines'); // fails the test when they do not come
    progress.stop();
    expect(written[0]).toBe('publish: starting (4 s)\n');
  });

  it('done before any update (a mirror with nothing to fetch) says done alone, not "done, starting"', () => {
    const written: string[] = [];
    const pipe = { isTTY: false, write: (s: string) => written.push(s) } as unknown as NodeJS.WriteStream;
    const progress = createProgress({ command: 'mirror', json: false, intervalMs: 60_000, stream: pipe, clock: () => 0 });
    progress.finish();
    progress.stop();
    expect(written).toEqual(['mirror: done (0 s)\n']);
  });
});
