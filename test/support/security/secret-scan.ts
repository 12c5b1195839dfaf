/**
 * Registered into secrets.test.ts, after its run that exercises everything: nothing the run left
 * (gateway logs, files under public/ and records/, HTTP responses, CLI output, the key files)
 * holds a raw API key or a private signing key, and the key files are hashes only, mode 0600.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LogLine } from '../../../gateway/context.ts';
import type { TestGateway } from '../gateway.ts';
import { allFiles } from '../outputs.ts';
import type { Project } from '../project.ts';
import { apiKeys, cliOutput, privateDs, scan, seen } from './secret-run.ts';

/** What the run used: its project, the gateway, and the second gateway (it signs never-audited answers). */
export interface SecretRun {
  p: Project;
  g: TestGateway;
  second: TestGateway;
}

let p: Project;
let g: TestGateway;
let second: TestGateway;

export function secretScanSuite(get: () => SecretRun): void {
  describe('the scan', () => {
    beforeAll(() => {
      ({ p, g, second } = get());
    });

    it('knows what it looks for', () => {
      expect(apiKeys.size).toBeGreaterThanOrEqual(5);
      expect(privateDs.size).toBe(2);
      expect(seen.length).toBeGreaterThan(40);
    });

    it('no gateway log line holds a secret', () => {
      const found: string[] = [];
      const lines: LogLine[] = [...g.logs, ...second.logs];
      for (const line of lines) scan(`log line ${JSON.stringify(line).slice(0, 120)}`, JSON.stringify(line), found);
      expect(found).toEqual([]);
    });

    it('no file under public/ or records/ holds a secret', async () => {
      const found: string[] = [];
      const files = [...(await allFiles(p.publicDir)), ...(await allFiles(p.recordsDir))];
      // The records ride in packs (no per-record files without --tree): the packs are scanned with the rest.
      expect(files.length).toBeGreaterThan(10);
      expect(files.some((f) => /\/packs\/[0-9a-f]{64}\.jsonl$/.test(f))).toBe(true);
      for (const file of files) scan(file, await readFile(file, 'latin1'), found);
      expect(found).toEqual([]);
    });

    it('no HTTP response (status, headers, body) holds a secret', () => {
      const found: string[] = [];
      for (const r of seen) scan(r.what, r.text, found);
      expect(found).toEqual([]);
    });

    it('no CLI output (other than the key `apikey create` prints) holds a secret', () => {
      const found: string[] = [];
      for (const o of cliOutput) scan(o.what, o.text, found);
      expect(found).toEqual([]);
    });

    it('the published key set holds public members only', async () => {
      const text = await readFile(p.keySetFile, 'utf8');
      for (const k of (JSON.parse(text) as { keys: Record<string, unknown>[] }).keys) {
        expect(Object.keys(k).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x']);
      }
    });

    it('the API key file holds only hashes (no key, no secret part) and is mode 0600', async () => {
      const text = await readFile(p.apiKeysFile, 'utf8');
      const found: string[] = [];
      scan(p.apiKeysFile, text, found);
      expect(found).toEqual([]);
      const entries = (JSON.parse(text) as { keys: Record<string, unknown>[] }).keys;
      expect(entries.length).toBe(3); // g's, second's, and the one made with the CLI
      for (const e of entries) {
        expect(Object.keys(e).sort()).toEqual(['created', 'id', 'label', 'revoked', 'sha256']);
        expect(e.sha256).toMatch(/^[0-9a-f]{64}$/);
      }
      const hashes = new Set(entries.map((e) => e.sha256));
      for (const key of [g.key, second.key]) expect(hashes.has(createHash('sha256').update(key).digest('hex'))).toBe(true);
      expect((await stat(p.apiKeysFile)).mode & 0o777).toBe(0o600);
    });

    it('every signing key file is mode 0600, in folders only its owner can enter', async () => {
      let n = 0;
      for (const sub of ['signing', 'retired']) {
        const dir = join(p.keysDir, sub);
        expect((await stat(dir)).mode & 0o077, `${dir} is not open to group or others`).toBe(0);
        for (const name of await readdir(dir)) {
          expect((await stat(join(dir, name))).mode & 0o777, `${sub}/${name}`).toBe(0o600);
          n++;
        }
      }
      expect(n).toBe(2);
    });
  });
}
