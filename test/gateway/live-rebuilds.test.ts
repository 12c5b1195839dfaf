/**
 * A new build swapped in under a running gateway, with no restart: a changed record, a new
 * signing key and key set after a rotation, a removed audit. Every wait is a bounded poll.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseKeySet } from '@merchant-verify/verifier';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyRecordNode } from '../../core/crypto/signing.ts';
import { keygen } from '../../keyring/signing-keys.ts';
import { cleanup, type TestGateway, useGateway } from '../support/gateway.ts';
import { publishedKeySet } from '../support/outputs.ts';
import { liveRecordBytes } from '../support/packs.ts';
import { build, type Project } from '../support/project.ts';
import { poll } from '../support/wait.ts';

const KNOWN = 'acme-outdoor.example';

afterAll(cleanup);

describe('a rebuild swapped in while running', () => {
  let project: Project;
  let g: TestGateway;

  useGateway((t) => ({ project, g } = t));

  /** Rewrites the score of one audit line in the project's copy of verified.jsonl. */
  async function setScore(domain: string, score: number): Promise<void> {
    const file = join(project.auditsDir, 'verified.jsonl');
    const lines = (await readFile(file, 'utf8')).split('\n').map((line) => {
      if (line.trim() === '') return line;
      const audit = JSON.parse(line) as { domain: string; score: number };
      return audit.domain === domain ? JSON.stringify({ ...audit, score }) : line;
    });
    await writeFile(file, lines.join('\n'));
  }

  async function servedKeySet() {
    const r = await g.request('/.well-known/merchant-verify-keys.json', { key: null });
    expect(r.status).toBe(200);
    return { reply: r, keySet: parseKeySet(r.json) };
  }

  it('serves the new record after a rebuild, verified against the served key set', async () => {
    const first = await g.verify(KNOWN);
    expect(first.json.score).toBe(93.5);
    expect(first.json.key_id).toBe(project.kid);
    const gadgetBefore = await g.verify('gadget-hub.example');

    await setScore(KNOWN, 12.5);
    await build(project);

    const { value: r } = await poll(
      () => g.verify(KNOWN),
      (r) => r.status === 200 && r.json.score === 12.5,
      { timeoutMs: 5000 },
    );
    expect(r.json.tier).toBe('bronze');
    expect(r.bytes.equals(await liveRecordBytes(project, KNOWN))).toBe(true);
    expect(r.headers.get('etag')).not.toBe(first.headers.get('etag'));
    const { keySet } = await servedKeySet();
    expect(verifyRecordNode(r.json, keySet)).toEqual({ valid: true, keyId: project.kid });
    // Unchanged audits give the same bytes (same --now, same key): still served, still verified.
    const gadget = await g.verify('gadget-hub.example');
    expect(gadget.status).toBe(200);
    expect(gadget.bytes.equals(gadgetBefore.bytes)).toBe(true);
  });

  it('after a key rotation (keygen, rebuild) serves records signed by the new key and the new key set', async () => {
    const oldKid = project.kid!;
    const newKid = await keygen(project.keysDir);
    expect(newKid).not.toBe(oldKid);
    const keySetBefore = await servedKeySet();
    await setScore(KNOWN, 61);
    await build(project);

    const { value: r } = await poll(
      () => g.verify(KNOWN),
      (r) => r.status === 200 && r.json.score === 61 && r.json.key_id === newKid,
      { timeoutMs: 5000 },
    );
    expect(r.json.tier).toBe('silver');
    expect(r.bytes.equals(await liveRecordBytes(project, KNOWN))).toBe(true);

    // The key set endpoint serves the newly published file: both keys, the new one first.
    const { value: ks } = await poll(
      () => g.request('/.well-known/merchant-verify-keys.json', { key: null }),
      (x) => x.text !== keySetBefore.reply.text,
      { timeoutMs: 3000 },
    );
    const published = await publishedKeySet(project);
    expect(ks.bytes.equals(published.bytes)).toBe(true);
    const keySet = parseKeySet(ks.json);
    expect(keySet.keys.map((k) => k.kid)).toEqual([newKid, oldKid]);
    expect(ks.headers.get('etag')).not.toBe(keySetBefore.reply.headers.get('etag'));

    expect(verifyRecordNode(r.json, keySet)).toEqual({ valid: true, keyId: newKid });
    // Against the old key set alone the new record would not verify: the served set is what matters.
    expect(verifyRecordNode(r.json, keySetBefore.keySet).valid).toBe(false);

    // Every record of the new build is signed by the new key and verifies.
    for (const domain of ['gadget-hub.example', 'xn--bcher-haus-9db.example', 'quiet-pottery.example']) {
      const other = await g.verify(domain);
      expect(other.status, domain).toBe(200);
      expect(other.json.key_id, domain).toBe(newKid);
      expect(verifyRecordNode(other.json, keySet).valid, domain).toBe(true);
      expect(other.bytes.equals(await liveRecordBytes(project, domain))).toBe(true);
    }
    expect(g.logs.filter((l) => l.msg === 'record rejected')).toEqual([]);
  });

  it('a build whose only change is a removed audit makes that domain never-audited', async () => {
    const file = join(project.auditsDir, 'verified.jsonl');
    const text = await readFile(file, 'utf8');
    await writeFile(
      file,
      text
        .split('\n')
        .filter((l) => !l.includes('"lumen-lighting.example"'))
        .join('\n'),
    );
    expect((await g.verify('lumen-lighting.example')).json.status).toBe('verified');
    await build(project);
    const { value } = await poll(
      () => g.verify('lumen-lighting.example'),
      (r) => r.json?.status === 'unverified',
      { timeoutMs: 5000 },
    );
    expect(value.status).toBe(200);
    expect(value.json.score).toBeNull();
  });
});
