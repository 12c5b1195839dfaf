import { readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BUILD_STATEMENT_FILE, CURRENT_LINK, DOMAIN_MAP_FILE, KEPT_FILE, LOG_DIR, MANIFEST_FILE } from '../../core/layout.ts';
import { createLogKey, logOrigin } from '../../keyring/log-key.ts';
import { buildArgs, runCli } from '../support/cli.ts';
import { currentTarget, readCurrentFiles, readCurrentRecords, readKeySet, snapshot, snapshotOutputs } from '../support/outputs.ts';
import { build, ISSUER, makeProject, NOW, type Project, removeTempDirs } from '../support/project.ts';

afterAll(removeTempDirs);

/**
 * Two builds' live files (records/current, every file) are byte-identical, the build statement
 * and its build id included: a build id is its time and a digest of its content.
 */
function expectSameBuild(fa: Map<string, string>, fb: Map<string, string>, files = 7): void {
  expect(fa.size).toBe(files); // the manifest, the index, the domain map, the build statement, one pack, the pack index and the compact answers (and 33 records with the tree)
  expect([...fb.keys()].sort()).toEqual([...fa.keys()].sort());
  for (const [rel, text] of fa) expect(fb.get(rel), rel).toBe(text);
  expect(fa.has(MANIFEST_FILE) && fa.has(DOMAIN_MAP_FILE) && fa.has(BUILD_STATEMENT_FILE)).toBe(true);
}

/** A second project sharing `p`'s audits and keys, with its own records/ and public/ folders. */
async function sibling(p: Project): Promise<Project> {
  const q = await makeProject({ samples: false, sign: false, build: false });
  return { ...q, auditsDir: p.auditsDir, keysDir: p.keysDir, kid: p.kid };
}

describe.concurrent('reproducible builds', () => {
  // Each test compares a build of its own with the plain project's (test/support/plain-project.ts):
  // the sample audits, its key, --now 2026-11-01, signed on the build's thread, batches of 500.
  it('same audits, key and --now: byte-identical packs, manifest, index, domain map and key set in two records folders', async () => {
    const a = await makeProject();
    const b = await sibling(a);
    // Worker threads and other batch sizes: the output must not depend on who signed, or on scheduling.
    const sb = await build(b, { workers: 2, batchSize: 3 });
    expect(sb.buildId).toBe(basename(await currentTarget(a.recordsDir)));
    expectSameBuild(await readCurrentFiles(a.recordsDir), await readCurrentFiles(b.recordsDir));
    expect((await readKeySet(b.publicDir)).text).toBe((await readKeySet(a.publicDir)).text);
  });

  it("the index and map in a thread of their own (as from INDEX_THREAD_FROM records) or on the build's thread: the same build and log, byte for byte", async () => {
    const a = await makeProject({ build: false });
    await createLogKey(a.keysDir, logOrigin(ISSUER));
    const b = await sibling(a);
    const [sa, sb] = [await build(a), await build(b, { indexThreadFrom: 0 })];
    expect(sb.buildId).toBe(sa.buildId);
    expect(sb.log).toMatchObject({ from: 0, to: 34, statement: 33 });
    expect(await snapshot(join(b.recordsDir, CURRENT_LINK))).toEqual(await snapshot(join(a.recordsDir, CURRENT_LINK)));
    expect(await snapshot(join(b.publicDir, LOG_DIR))).toEqual(await snapshot(join(a.publicDir, LOG_DIR)));
  });

  it('with the per-record tree asked for (runBuild, and the CLI with --tree): the same build id and files, and byte-identical record files beside them', async () => {
    const a = await makeProject();
    const b = await sibling(a);
    const c = await sibling(a);
    const sb = await build(b, { tree: true });
    const res = await runCli(buildArgs(c, ['--tree', '--workers', '2', '--json']));
    expect(res.code, res.stderr).toBe(0);
    expect(sb.buildId).toBe(basename(await currentTarget(a.recordsDir)));
    expect(JSON.parse(res.stdout)).toMatchObject({ build_id: sb.buildId });
    const [fa, fb] = [await readCurrentFiles(a.recordsDir), await readCurrentFiles(b.recordsDir)];
    expectSameBuild(fb, await readCurrentFiles(c.recordsDir), 40);
    for (const [rel, text] of fa) expect(fb.get(rel), rel).toBe(text);
  });

  it('a different --now changes issued_at (and so the signature) and nothing else', async () => {
    const a = await makeProject();
    const b = await sibling(a);
    await build(b, { now: Date.parse('2026-11-02T12:34:56.789Z') });
    const ra = await readCurrentRecords(a.recordsDir),
      rb = await readCurrentRecords(b.recordsDir);
    expect(rb.size).toBe(ra.size);
    for (const [domain, { record }] of ra) {
      const other = rb.get(domain)!.record;
      expect(record.issued_at).toBe('2026-11-01T00:00:00.000Z');
      expect(other.issued_at).toBe('2026-11-02T12:34:56.789Z');
      expect(other.signature).not.toBe(record.signature);
      const { issued_at: _a, signature: _sa, ...restA } = record;
      const { issued_at: _b, signature: _sb, ...restB } = other;
      expect(restB).toEqual(restA);
    }
  });

  it('SOURCE_DATE_EPOCH through the CLI: issued_at from the epoch, byte-identical to a build with --now at that time', async () => {
    const a = await makeProject();
    const b = await sibling(a);
    const epoch = String(NOW / 1000); // 2026-11-01T00:00:00Z, the plain project's --now
    const res = await runCli(buildArgs(b, ['--json'], null), { SOURCE_DATE_EPOCH: epoch });
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ ok: true, issued_at: '2026-11-01T00:00:00.000Z', records: 33, key_id: a.kid });
    expectSameBuild(await readCurrentFiles(a.recordsDir), await readCurrentFiles(b.recordsDir));
    expect((await readKeySet(b.publicDir)).text).toBe((await readKeySet(a.publicDir)).text);
    for (const { record } of (await readCurrentRecords(b.recordsDir)).values()) expect(record.issued_at).toBe('2026-11-01T00:00:00.000Z');
  });

  it('with a log key too: two records folders get byte-identical records/current trees and the same new log entries and checkpoint', async () => {
    const a = await makeProject({ build: false });
    await createLogKey(a.keysDir, logOrigin(ISSUER));
    const b = await sibling(a);
    const [sa, sb] = [await build(a), await build(b, { workers: 2, batchSize: 7 })];
    expect(sb.buildId).toBe(sa.buildId);
    expect(sb.log).toMatchObject({ from: 0, to: 34, statement: 33 });
    expect(await snapshot(join(b.recordsDir, CURRENT_LINK))).toEqual(await snapshot(join(a.recordsDir, CURRENT_LINK)));
    expect(await snapshot(join(b.publicDir, LOG_DIR))).toEqual(await snapshot(join(a.publicDir, LOG_DIR)));
  });

  it('the same build twice in one folder (the CLI, same --now) is one build: the second succeeds and changes nothing, the log and the kept list included', async () => {
    const p = await makeProject({ build: false });
    await createLogKey(p.keysDir, logOrigin(ISSUER));
    const first = await runCli(buildArgs(p, ['--json']));
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ unchanged: false, kept_builds: 1 });
    const before = await snapshotOutputs(p);
    const second = await runCli(buildArgs(p));
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain(
      `build ${(JSON.parse(first.stdout) as { build_id: string }).build_id} is already live (the same audits, keys, options and --now): no build written, nothing appended to the log`,
    );
    // Its summary says what was done: the records checked, nothing appended (not "no log key": the log has one).
    expect(second.stdout).toMatch(/^checked 33 records from /m);
    expect(second.stdout).toContain('log:       nothing appended (its records are in the log already, if it has one)');
    expect(await snapshotOutputs(p)).toEqual(before);
    expect((JSON.parse(await readFile(join(p.recordsDir, KEPT_FILE), 'utf8')) as { builds: unknown[] }).builds).toHaveLength(1);
  });
});
