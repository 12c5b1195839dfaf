import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generatePrivateJwk, toPublicJwk, verifyRecordNode } from '../../core/crypto/signing.ts';
import { keygen as keystoreKeygen, listKeys, retireKey } from '../../keyring/signing-keys.ts';
import { buildArgs, runCli } from '../support/cli.ts';
import { currentTarget, listFiles, readCurrentRecords, readKeySet, snapshotOutputs } from '../support/outputs.ts';
import { build, buildFails, makeProject, type Project, removeTempDirs } from '../support/project.ts';

afterAll(removeTempDirs);

async function expectAllSignedBy(p: Project, kid: string): Promise<void> {
  const { keySet } = await readKeySet(p.publicDir);
  const records = await readCurrentRecords(p.recordsDir);
  expect(records.size).toBe(33);
  for (const [domain, { record }] of records) {
    expect(record.key_id, domain).toBe(kid);
    expect(verifyRecordNode(record, keySet), domain).toEqual({ valid: true, keyId: kid });
  }
}

const kids = async (p: Project) => (await readKeySet(p.publicDir)).keySet.keys.map((k) => k.kid);

// Every case has a project of its own: all run side by side, the longest (key rotation) first.
describe.concurrent('signing keys in the build', () => {
  describe.concurrent('key rotation with keygen', () => {
    it('keygen, build, keygen, build: both keys listed, new records signed by the new key; retire the old one; the active one cannot be retired', async () => {
      const p = await makeProject({ samples: true, sign: false, build: false });
      const keygen = async (...extra: string[]) => runCli(['keygen', '--keys', p.keysDir, ...extra]);

      const first = await keygen();
      expect(first.code, first.stderr).toBe(0);
      const oldKid = first.stdout.trim();
      expect(oldKid).toMatch(/^[A-Za-z0-9_-]{43}$/);
      await build(p);
      await expectAllSignedBy(p, oldKid);
      const oldRecords = await readCurrentRecords(p.recordsDir);

      const second = await keygen('--json');
      expect(second.code, second.stderr).toBe(0);
      const newKid = (JSON.parse(second.stdout) as { kid: string }).kid;
      expect(newKid).not.toBe(oldKid);
      const summary = await build(p);
      expect(summary.keyId).toBe(newKid);
      expect(await kids(p)).toEqual([newKid, oldKid]);
      await expectAllSignedBy(p, newKid);
      // Records of the previous build (signed by the old key) still verify against the new key set.
      const { keySet } = await readKeySet(p.publicDir);
      for (const { record } of oldRecords.values()) expect(verifyRecordNode(record, keySet)).toEqual({ valid: true, keyId: oldKid });

      const retireActive = await keygen(`--retire=${newKid}`);
      expect(retireActive.code, retireActive.stderr).toBe(2);
      expect(retireActive.stderr).toMatch(/active/);

      const retire = await keygen(`--retire=${oldKid}`);
      expect(retire.code, retire.stderr).toBe(0);
      expect(await listKeys(p.keysDir)).toEqual(
        expect.arrayContaining([
          { kid: newKid, active: true, retired: false },
          { kid: oldKid, active: false, retired: true },
        ]),
      );
      // A retired key stays listed while a kept build was signed by it: with --keep 1 none is.
      const after = await build(p, { keep: 1 });
      expect(after.publishedKeyIds).toEqual([newKid]);
      expect(await kids(p)).toEqual([newKid]);
      await expectAllSignedBy(p, newKid);
      expect(await currentTarget(p.recordsDir)).toBe(join('builds', after.buildId));
    });
  });

  describe.concurrent('unsigned mode (no key in keys/, no MVR_SIGNING_KEY)', () => {
    it('runBuild: records carry neither key_id nor signature, the key set is {"keys":[]}, a warning is given', async () => {
      const p = await makeProject({ samples: true, sign: false, build: false });
      const warnings: string[] = [];
      const summary = await build(p, { onWarning: (m) => warnings.push(m) });
      // Unsigned, and (no log key either) not in the transparency log: both said.
      expect(warnings).toHaveLength(2);
      expect(warnings[0]).toMatch(/no signing key/i);
      expect(warnings[1]).toMatch(/no log key configured/);
      expect(summary).toMatchObject({ signed: false, keyId: null, publishedKeyIds: [], records: 33 });
      const { text, keySet } = await readKeySet(p.publicDir);
      expect(text.trim()).toBe('{"keys":[]}');
      expect(keySet).toEqual({ keys: [] });
      for (const [domain, { record }] of await readCurrentRecords(p.recordsDir)) {
        expect('key_id' in record, domain).toBe(false);
        expect('signature' in record, domain).toBe(false);
        expect(verifyRecordNode(record, keySet)).toMatchObject({ valid: false, code: 'UNSIGNED' });
      }
    });

    it('CLI: builds (exit 0) and says so on stderr', async () => {
      const p = await makeProject({ samples: true, sign: false, build: false });
      const res = await runCli(buildArgs(p, ['--json']));
      expect(res.code, res.stderr).toBe(0);
      expect(res.stderr).toMatch(/warning: .*no signing key/i);
      expect(JSON.parse(res.stdout)).toMatchObject({ ok: true, signed: false, key_id: null, published_key_ids: [] });
      expect((await readKeySet(p.publicDir)).text.trim()).toBe('{"keys":[]}');
      for (const { record } of (await readCurrentRecords(p.recordsDir)).values()) {
        expect(record).not.toHaveProperty('signature');
        expect(record).not.toHaveProperty('key_id');
      }
    });
  });

  describe.concurrent('MVR_SIGNING_KEY', () => {
    it('overrides keys/active (runBuild); the key set lists it first and keeps the keys/ key', async () => {
      const p = await makeProject({ samples: true, sign: true, build: false });
      const env = generatePrivateJwk();
      const summary = await build(p, { signingKey: JSON.stringify(env) });
      expect(summary.keyId).toBe(env.kid);
      expect(await kids(p)).toEqual([env.kid, p.kid]);
      await expectAllSignedBy(p, env.kid);
    });

    it('overrides keys/active through the CLI environment', async () => {
      const p = await makeProject({ samples: true, sign: true, build: false });
      const env = generatePrivateJwk();
      const res = await runCli(buildArgs(p, ['--json']), { MVR_SIGNING_KEY: JSON.stringify(env) });
      expect(res.code, res.stderr).toBe(0);
      expect(JSON.parse(res.stdout)).toMatchObject({ ok: true, signed: true, key_id: env.kid });
      await expectAllSignedBy(p, env.kid);
      expect(res.stdout + res.stderr).not.toContain(env.d);
    });

    it('a malformed MVR_SIGNING_KEY fails the build (INVALID_KEY, exit 2) without echoing the key or publishing', async () => {
      const p = await makeProject();
      const before = await snapshotOutputs(p);
      const good = generatePrivateJwk();
      const mismatched = JSON.stringify({ ...good, x: generatePrivateJwk().x, kid: undefined });
      const error = await buildFails(p, { signingKey: mismatched });
      expect(error.code).toBe('INVALID_KEY');
      expect(error.message).not.toContain(good.d);
      const res = await runCli(buildArgs(p), { MVR_SIGNING_KEY: mismatched });
      expect(res.code, res.stderr).toBe(2);
      expect(res.stderr).toMatch(/INVALID_KEY/);
      expect(res.stdout + res.stderr).not.toContain(good.d);
      expect(await snapshotOutputs(p)).toEqual(before);
    });
  });

  describe.concurrent('--publish-keys (CI keeps earlier public keys listed)', () => {
    it("lists the file's public keys after the active key, and refuses a file that holds a private key", async () => {
      const p = await makeProject({ samples: true, sign: true, build: false });
      const earlier = generatePrivateJwk();
      const publicSet = join(p.root, 'earlier-keys.json');
      await writeFile(publicSet, JSON.stringify({ keys: [toPublicJwk(earlier.x)] }));
      const summary = await build(p, { publishKeysFile: publicSet });
      expect(summary.publishedKeyIds).toEqual([p.kid, earlier.kid]);
      expect(await kids(p)).toEqual([p.kid, earlier.kid]);
      const before = await snapshotOutputs(p);

      const privateSet = join(p.root, 'oops-private-keys.json');
      await writeFile(privateSet, JSON.stringify({ keys: [earlier] }));
      const error = await buildFails(p, { publishKeysFile: privateSet });
      expect(error.code).toBe('INVALID_CONFIG');
      expect(error.message).not.toContain(earlier.d);
      expect(await snapshotOutputs(p)).toEqual(before);
    });
  });

  describe.concurrent('no private key material leaves keys/', () => {
    /** Every JSON member named "d", at any depth. */
    function privateMembers(value: unknown, path = '$'): string[] {
      if (Array.isArray(value)) return value.flatMap((v, i) => privateMembers(v, `${path}[${i}]`));
      if (typeof value === 'object' && value !== null) {
        return Object.entries(value).flatMap(([k, v]) => (k === 'd' ? [`${path}.d`] : []).concat(privateMembers(v, `${path}.${k}`)));
      }
      return [];
    }

    it('after signed builds (keys/ and MVR_SIGNING_KEY, one retired key), no file under public/ or records/ holds "d" or a d value; key files are 0600', async () => {
      // The plain project: its key in keys/ and one build signed by it.
      const p = await makeProject();
      await keystoreKeygen(p.keysDir);
      await build(p);
      const envKey = generatePrivateJwk();
      await build(p, { signingKey: JSON.stringify(envKey) });
      await retireKey(p.keysDir, p.kid!);

      const secrets = [envKey.d];
      const keyFiles: string[] = [];
      for (const sub of ['signing', 'retired']) {
        for (const name of await readdir(join(p.keysDir, sub))) {
          const file = join(p.keysDir, sub, name);
          keyFiles.push(file);
          secrets.push((JSON.parse(await readFile(file, 'utf8')) as { d: string }).d);
        }
      }
      expect(keyFiles).toHaveLength(2);
      expect(secrets.every((s) => typeof s === 'string' && s.length === 43)).toBe(true);
      for (const file of keyFiles) expect(((await stat(file)).mode & 0o777).toString(8), file).toBe('600');

      let scanned = 0;
      for (const dir of [p.publicDir, p.recordsDir]) {
        for (const [rel, abs] of await listFiles(dir)) {
          const text = await readFile(abs, 'utf8');
          scanned++;
          for (const secret of secrets) expect(text.includes(secret), `${rel} holds a private key`).toBe(false);
          expect(text, rel).not.toMatch(/"d"\s*:/);
          // JSON Lines (the index, the change feed): each line is a JSON value; the verify page (HTML, JS) only as text.
          const values = rel.endsWith('.jsonl')
            ? text
                .split('\n')
                .filter(Boolean)
                .map((l) => JSON.parse(l) as unknown)
            : rel.endsWith('.json')
              ? [JSON.parse(text) as unknown]
              : [];
          for (const value of values) expect(privateMembers(value), rel).toEqual([]);
        }
      }
      // The key set and the verify page (2 files), the list of kept builds, three kept builds of a manifest, an index,
      // a domain map, a build statement, a pack, a pack index and the compact answers each, and their change feeds
      // (against 0, 1 and 2 earlier builds). The packs are JSON Lines, so each of their 33 records is scanned as a value too.
      expect(scanned).toBe(1 + 2 + 1 + 3 * 7 + (0 + 1 + 2));
    });
  });
});
