/**
 * `mvr mirror --policy`: the checkpoint the build's statement is proven against must carry the
 * policy's quorum of cosignatures. A build cosigned by two of its three witnesses is mirrored under
 * a two-of-three policy and refused, naming NOT_WITNESSED, under one that asks for all three.
 */
import { readFile, readlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import { removeTempDirs, tempDir } from '../support/project.ts';
import { publishTo } from '../support/s3-records.ts';
import { startS3, type TestS3 } from '../support/s3-server.ts';
import { type WitnessedProject, witnessedProject } from '../support/witnessed-project.ts';

const BUCKET = 'mvr-mirror-witnessed';
const FROM = `s3://${BUCKET}/prod`;
let s3: TestS3;
let w: WitnessedProject;

beforeAll(async () => {
  s3 = await startS3([BUCKET]);
  w = await witnessedProject();
  await w.policyWith(['c']);
  const built = await w.build('2026-11-01T00:00:00Z');
  if (built.code !== 0) throw new Error(built.stdout + built.stderr);
  await publishTo(s3, BUCKET, 'prod', w.p);
}, 120_000);
afterAll(async () => {
  await w.close();
  await s3.close();
  await removeTempDirs();
});

const mirror = (dir: string, policy: string) =>
  runCli(['mirror', '--from', FROM, '--to', dir, '--trusted-keys', w.p.keySetFile, '--policy', policy, '--json'], s3.env);

describe('mvr mirror --policy', () => {
  it('mirrors a build whose checkpoint two of three witnesses cosigned, under a two-of-three policy', async () => {
    const dir = join(await tempDir('mvr-mirror-'), 'mirror');
    const run = await mirror(dir, w.policyFile);
    expect(run.stdout).toMatch(/"ok":true/);
    expect(run.code).toBe(0);
    expect(await readlink(join(dir, 'current'))).toMatch(/^builds\//);
  });

  it('refuses it under a policy that asks for all three, naming NOT_WITNESSED; nothing goes live', async () => {
    const strict = join(await tempDir(), 'all-three.policy');
    const text = await readFile(w.policyFile, 'utf8');
    await writeFile(strict, text.replace(/group two-of-three 2 a b c\nquorum two-of-three/, 'group all-three all a b c\nquorum all-three'));
    const dir = join(await tempDir('mvr-mirror-'), 'mirror');
    const run = await mirror(dir, strict);
    const out = JSON.parse(run.stdout) as { code: string; message: string };
    expect(out.code).toBe('MIRROR_REFUSED');
    expect(out.message).toMatch(/statement is not proven in the log and witnessed: NOT_WITNESSED/);
    expect(run.code).toBe(21);
    expect(await readlink(join(dir, 'current')).catch(() => null)).toBeNull();
  });
});
