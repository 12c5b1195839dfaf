/**
 * `mvr log witness` on a records folder: the live checkpoint goes to the witnesses again, the
 * fresh cosignatures replace the old ones in the live build and public/log, a witness that is
 * down keeps its earlier cosignature, and a running gateway serves the new ones at once, at
 * `/log/checkpoint` and inside record proofs.
 */
import { readFile, realpath, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTlogProof } from '#shared';
import { generateWitnessKeyText, parseWitnessKey } from '../../witness/server/witness-key.ts';
import { runCli } from '../support/cli.ts';
import { cleanup, type TestGateway } from '../support/gateway.ts';
import { camelCaseInOutput } from '../support/json-members.ts';
import { gatewayOver, logDir } from '../support/logged-project.ts';
import { GOLD, removeTempDirs } from '../support/project.ts';
import { policyText } from '../support/witness.ts';
import { cosignatureTimes, cosignersOf, type WitnessedProject, witnessedProject } from '../support/witnessed-project.ts';

const DAY = 86_400_000;
let w: WitnessedProject;
let g: TestGateway;
let policy: string;
beforeAll(async () => {
  w = await witnessedProject();
  policy = await w.policyWith();
  const run = await w.build('2026-11-01T00:00:00Z');
  if (run.code !== 0) throw new Error(run.stdout + run.stderr);
  g = await gatewayOver(w.p);
});
afterAll(async () => {
  await cleanup();
  await w.close();
  await removeTempDirs();
});

/** A witness as an external party might run it, that answers every request with `status`. */
async function answering(status: number): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    req.resume().on('end', () => res.writeHead(status, { 'content-type': 'text/plain' }).end(`status ${status}\n`));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const refresh = () =>
  runCli(['log', 'witness', '--policy', w.policyFile, '--records', w.p.recordsDir, '--public', w.p.publicDir, '--json']);
const served = async () => (await g.request('/log/checkpoint')).text;
const servedInProof = async () => parseTlogProof((await g.request(`/v1/proof?domain=${GOLD}`)).text).checkpoint;

describe.sequential('mvr log witness on a records folder', () => {
  it('moves the cosignatures to fresh timestamps, and the running gateway serves them', async () => {
    const t0 = w.witnesses[0]!.now.ms;
    expect(cosignatureTimes(await served(), policy, t0)).toEqual({ a: t0, b: t0, c: t0 });
    w.setClock(t0 + DAY);
    const run = await refresh();
    expect(run.code, run.stderr).toBe(0);
    expect(camelCaseInOutput(run)).toEqual([]);
    const result = JSON.parse(run.stdout) as { written: string[]; witnesses: { ok: boolean }[] };
    expect(result.written).toEqual([
      join(await realpath(join(w.p.recordsDir, 'current')), 'log-checkpoint'),
      join(logDir(w.p), 'checkpoint'),
    ]);
    expect(result.witnesses.map((r) => r.ok)).toEqual([true, true, true]);
    const now = t0 + DAY;
    expect(cosignatureTimes(await served(), policy, now)).toEqual({ a: now, b: now, c: now });
    expect(cosignatureTimes(await servedInProof(), policy, now)).toEqual({ a: now, b: now, c: now });
    // Within a maximum age of an hour: the refreshed checkpoint is current, the one before was not.
    expect(cosignersOf(await servedInProof(), policy, now, 3_600_000)).toEqual(['a', 'b', 'c']);
    expect(await readFile(join(logDir(w.p), 'checkpoint'), 'utf8')).toBe(await served());
  });

  it('keeps the earlier cosignature of a witness that is down, and says so', async () => {
    const before = w.witnesses[0]!.now.ms;
    w.setClock(before + DAY);
    await w.policyWith(['c']);
    const run = await refresh();
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).witnesses[2]).toMatchObject({ witness: 'c', ok: false, code: 'WITNESS_UNAVAILABLE' });
    expect(cosignatureTimes(await served(), policy, before + DAY)).toEqual({ a: before + DAY, b: before + DAY, c: before });
  });

  it('reports a witness that answers 500 and one that refuses the proof (422) by name, and the others still cosign', async () => {
    const fakes = await Promise.all([500, 422].map((status) => answering(status)));
    try {
      const entries = w.witnesses.map((x, i) => ({ name: 'abc'[i]!, vkey: x.key.vkey, url: x.url }));
      const fakeEntries = fakes.map((f, i) => ({
        name: `fake${i}`,
        vkey: parseWitnessKey(generateWitnessKeyText(`fake${i}.test/witness`), 'fake').vkey,
        url: f.url,
      }));
      await writeFile(
        w.policyFile,
        policyText({ key: w.logKey }, [...entries, ...fakeEntries], 'group two-of-three 2 a b c\nquorum two-of-three'),
      );
      const run = await refresh();
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout).witnesses).toMatchObject([
        { witness: 'a', ok: true },
        { witness: 'b', ok: true },
        { witness: 'c', ok: true },
        { witness: 'fake0', ok: false, code: 'WITNESS_UNAVAILABLE', status: 500 },
        {
          witness: 'fake1',
          ok: false,
          code: 'WITNESS_REFUSED',
          status: 422,
          message: expect.stringMatching(/^witness fake1 refused the consistency proof/),
        },
      ]);
    } finally {
      for (const f of fakes) await f.close();
    }
  });

  it('fails with WITNESS_QUORUM_NOT_MET when fewer than the quorum cosign, fresh or earlier', async () => {
    await w.policyWith(['a', 'b', 'c']);
    const live = join(w.p.recordsDir, 'current', 'log-checkpoint');
    // The checkpoint signed by the log alone (the log's signature is the first line), as a build without a policy leaves it.
    const [text, signatures] = (await readFile(live, 'utf8')).split('\n\n') as [string, string];
    await writeFile(live, `${text}\n\n${signatures.split('\n')[0]}\n`);
    const run = await refresh();
    expect(run.code, run.stdout).toBe(19);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: false, code: 'WITNESS_QUORUM_NOT_MET' });
  });
});

describe('mvr log witness: messages name the flag as typed', () => {
  const witnessWith = (flag: string, file: string) =>
    runCli(['log', 'witness', flag, file, '--records', w.p.recordsDir, '--public', w.p.publicDir, '--json']);

  it('a policy file given by --policy that cannot be read, or says "quorum none", is INVALID_CONFIG naming --policy', async () => {
    const missing = join(w.p.root, 'no-such.policy');
    const unread = await witnessWith('--policy', missing);
    expect(unread.code).toBe(2);
    expect(JSON.parse(unread.stdout)).toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringMatching(/^--policy .*no-such\.policy/),
    });
    const none = join(w.p.root, 'none.policy');
    await writeFile(none, 'quorum none\n');
    const nothing = await witnessWith('--policy', none);
    expect(JSON.parse(nothing.stdout)).toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringMatching(/^--policy .*none\.policy/),
    });
  });

  it('a policy file saved with CRLF line ends is INVALID_POLICY naming --policy, the file and its line, and saying CRLF', async () => {
    const crlf = join(w.p.root, 'crlf.policy');
    await writeFile(crlf, (await readFile(w.policyFile, 'utf8')).replaceAll('\n', '\r\n'));
    const r = await witnessWith('--policy', crlf);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({
      code: 'INVALID_POLICY',
      message: expect.stringMatching(/^--policy \S*crlf\.policy:1: .*CRLF/),
    });
  });

  it('given by --witness-policy, the same refusal names --witness-policy', async () => {
    const r = await witnessWith('--witness-policy', join(w.p.root, 'no-such.policy'));
    expect(JSON.parse(r.stdout)).toMatchObject({ code: 'INVALID_CONFIG', message: expect.stringMatching(/^--witness-policy /) });
  });
});
