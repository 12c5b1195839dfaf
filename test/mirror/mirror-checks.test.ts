/**
 * The record checks of a mirror, on builds a bucket could not forge but an issuer's own key could
 * sign: a statement re-signed (with the build's real key) over a pack whose records are in the
 * wrong order, one short of its count, one whose signature was changed, or one validly signed but not the
 * record the build's map commits to (its entry rebuilt from it is not the leaf at its place). The pack's hash then
 * matches the statement, so each is caught by the record check that names its record.
 */
import { hash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseKeySet } from '@merchant-verify/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BuildStatement, statementText } from '#shared';
import { signRecord } from '../../core/crypto/signing.ts';
import { MirrorRefusedError } from '../../core/errors/errors.ts';
import { loadActiveKey } from '../../keyring/signing-keys.ts';
import { checkMap, checkPack, checkStatement } from '../../mirror/checks.ts';
import { NOV } from '../support/logged-project.ts';
import { packedProject, packLines } from '../support/mirror.ts';
import { type Project, removeTempDirs } from '../support/project.ts';

let project: Project;
let statement: BuildStatement;

beforeAll(async () => {
  project = await packedProject(NOV);
  statement = JSON.parse(await readFile(join(project.recordsDir, 'current', 'statement.json'), 'utf8')) as BuildStatement;
});
afterAll(removeTempDirs);

/** Pack 0 as `lines`, under a statement naming its new hash and length, signed by the build's own key; checked as a mirror checks it. */
async function signedWithPack0(lines: string[]) {
  const bytes = Buffer.from(lines.map((l) => `${l}\n`).join(''));
  const files = [{ sha256: hash('sha256', bytes), bytes: bytes.length }, ...statement.packs!.files.slice(1)];
  const key = (await loadActiveKey(project.keysDir, undefined))!;
  const signed = signRecord({ ...statement, packs: { ...statement.packs!, files } }, key);
  const read = async (name: string) =>
    name === 'statement.json' ? Buffer.from(statementText(signed)) : readFile(join(project.recordsDir, 'current', name)).catch(() => null);
  const keySet = await readFile(project.keySetFile);
  const signedStatement = await checkStatement(read, keySet, parseKeySet(JSON.parse(keySet.toString())), statement.build, 'test');
  const checked = await checkMap(read, signedStatement, 'test');
  return () => checkPack(bytes, 0, checked);
}

const thrown = async (check: () => Promise<unknown>): Promise<MirrorRefusedError> => {
  try {
    await check();
  } catch (error) {
    if (error instanceof MirrorRefusedError) return error;
    throw error;
  }
  throw new Error('the check passed');
};

describe("a mirror's record checks, under a statement that signs the pack as it is", () => {
  it('the pack as built passes', async () => {
    const lines = await packLines(project, 0);
    expect([...(await (await signedWithPack0(lines))()).ends]).toEqual([lines[0]!.length + 1, lines[0]!.length + lines[1]!.length + 2]);
  });

  it('records in the wrong order: the first is named, out of its place in hash order', async () => {
    const [a, b] = await packLines(project, 0);
    const error = await thrown(await signedWithPack0([b!, a!]));
    const domain = (JSON.parse(b!) as { domain: string }).domain;
    expect(error.message).toMatch(new RegExp(`record 0 \\(${domain}\\) of pack 0 \\([0-9a-f]{64}\\) is out of place`));
    expect(error.place).toMatchObject({ pack: { number: 0 }, record: { index: 0, domain } });
  });

  it('a record dropped: the pack holds fewer than the count puts in it', async () => {
    const [a] = await packLines(project, 0);
    const error = await thrown(await signedWithPack0([a!]));
    expect(error.message).toMatch(/pack 0 \([0-9a-f]{64}\) holds 1 records, but the statement's count \(\d+\) puts 2 in it/);
  });

  it("a record whose signature is not its own: named, with the serve rule's reason", async () => {
    const [a, b] = await packLines(project, 0);
    const other = (JSON.parse(b!) as { signature: string }).signature;
    const forged = a!.replace(/"signature":"[^"]+"/, `"signature":"${other}"`);
    const error = await thrown(await signedWithPack0([forged, b!]));
    const domain = (JSON.parse(a!) as { domain: string }).domain;
    expect(error.message).toMatch(new RegExp(`record 0 \\(${domain}\\) of pack 0 .* does not pass the serve rule: .*BAD_SIGNATURE`));
  });

  it("a validly signed record of the same domain that is not the build's (another month's): its entry is not leaf i", async () => {
    const [a, b] = await packLines(project, 0);
    const { key_id: _k, signature: _s, ...record } = JSON.parse(a!) as Record<string, unknown>;
    const key = (await loadActiveKey(project.keysDir, undefined))!;
    const other = JSON.stringify(signRecord({ ...record, issued_at: '2026-10-01T00:00:00.000Z' }, key));
    const error = await thrown(await signedWithPack0([other, b!]));
    expect(error.message).toMatch(
      new RegExp(`record 0 \\(${record.domain}\\) of pack 0 .* is not what its build's map committed: its record_hash`),
    );
    expect(error.place).toMatchObject({ pack: { number: 0 }, record: { index: 0, domain: record.domain } });
  });
});
