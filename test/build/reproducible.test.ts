import { basename } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BUILD_STATEMENT_FILE, DOMAIN_MAP_FILE, MANIFEST_FILE } from '../../core/layout.ts';
import { buildArgs, runCli } from '../support/cli.ts';
import { currentTarget, readCurrentFiles, readCurrentRecords, readKeySet } from '../support/outputs.ts';
import { build, makeProject, NOW, type Project, removeTempDirs } from '../support/project.ts';

afterAll(removeTempDirs);

/**
 * Two builds' files are byte-identical, but for the build statement, which names its build (ids
 * end in random bytes, so two builds never share one): the same statement but for `build` and the
 * signature over it.
 */
function expectSameBuild(fa: Map<string, string>, fb: Map<string, string>): void {
  expect(fa.size).toBe(37); // 33 records, the manifest, the index, the domain map and the build statement
  expect([...fb.keys()].sort()).toEqual([...fa.keys()].sort());
  for (const [rel, text] of fa) if (rel !== BUILD_STATEMENT_FILE) expect(fb.get(rel), rel).toBe(text);
  expect(fa.has(MANIFEST_FILE) && fa.has(DOMAIN_MAP_FILE)).toBe(true);
  const { build: ba, signature: sa, ...a } = JSON.parse(fa.get(BUILD_STATEMENT_FILE)!) as Record<string, unknown>;
  const { build: bb, signature: sb, ...b } = JSON.parse(fb.get(BUILD_STATEMENT_FILE)!) as Record<string, unknown>;
  expect(b).toEqual(a);
  expect(bb).not.toBe(ba);
  expect(sb).not.toBe(sa);
}

/** A second project sharing `p`'s audits and keys, with its own records/ and public/ folders. */
async function sibling(p: Project): Promise<Project> {
  const q = await makeProject({ samples: false, sign: false, build: false });
  return { ...q, auditsDir: p.auditsDir, keysDir: p.keysDir, kid: p.kid };
}

describe.concurrent('reproducible builds', () => {
  // Each test compares a build of its own with the plain project's (test/support/plain-project.ts):
  // the sample audits, its key, --now 2026-11-01, one worker thread, batches of 500.
  it('same audits, key and --now: byte-identical record files, manifest, index, domain map and key set in two records folders', async () => {
    const a = await makeProject();
    const b = await sibling(a);
    // Different worker counts and batch sizes: the output must not depend on scheduling.
    const sb = await build(b, { workers: 2, batchSize: 3 });
    expect(sb.buildId).not.toBe(basename(await currentTarget(a.recordsDir)));
    expectSameBuild(await readCurrentFiles(a.recordsDir), await readCurrentFiles(b.recordsDir));
    expect((await readKeySet(b.publicDir)).text).toBe((await readKeySet(a.publicDir)).text);
  });

  it('a different --now changes issued_at (and so the signature) and nothing else', async () => {
    const a = await makeProject();
    const b = await sibling(a);
    await build(b, { now: Date.parse('2026-11-02T12:34:56.789Z') });
    const ra = await readCurrentRecords(a.recordsDir), rb = await readCurrentRecords(b.recordsDir);
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
    expect(JSON.parse(res.stdout)).toMatchObject({ ok: true, issuedAt: '2026-11-01T00:00:00.000Z', records: 33, keyId: a.kid });
    expectSameBuild(await readCurrentFiles(a.recordsDir), await readCurrentFiles(b.recordsDir));
    expect((await readKeySet(b.publicDir)).text).toBe((await readKeySet(a.publicDir)).text);
    for (const { record } of (await readCurrentRecords(b.recordsDir)).values()) expect(record.issued_at).toBe('2026-11-01T00:00:00.000Z');
  });
});
