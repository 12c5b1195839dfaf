/**
 * Changes to the API key file never lose one another: twenty `mvr apikey create` processes run
 * beside one `mvr apikey revoke` (real processes, as operators and scripts run them), and after
 * them every created key is in the file and works, and the revoked key stays revoked. A lock left
 * by a process that died is taken over.
 */
import { spawn } from 'node:child_process';
import { readdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createApiKey, listApiKeys } from '../../access/api-keys.ts';
import { runCli, spawnCli } from '../support/cli.ts';
import { cleanup, startTestGateway } from '../support/gateway.ts';
import { GOLD, makeProject } from '../support/project.ts';
import { waitForExit } from '../support/wait.ts';

afterAll(cleanup);

const CREATES = 20;

describe('the API key file under concurrent changes', () => {
  it(`${CREATES} creates beside a revoke, each its own process: every key kept, the revocation too`, async () => {
    const project = await makeProject();
    const g = await startTestGateway(project);
    const doomed = await createApiKey(project.apiKeysFile, 'to be revoked');
    g.secrets.add(doomed.key);
    expect((await g.verify(GOLD, { key: doomed.key })).status).toBe(200);

    const keysFlag = ['--api-keys', project.apiKeysFile];
    const [revoked, ...created] = await Promise.all([
      spawnCli(['apikey', 'revoke', doomed.entry.id, ...keysFlag]),
      ...Array.from({ length: CREATES }, (_, i) => spawnCli(['apikey', 'create', '--label', `parallel ${i}`, '--json', ...keysFlag])),
    ]);
    expect(revoked!.code, revoked!.stderr).toBe(0);
    const made = created.map((r) => {
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as { key: string; id: string };
    });
    for (const m of made) g.secrets.add(m.key);

    const listed = await listApiKeys(project.apiKeysFile);
    expect(listed.find((k) => k.id === doomed.entry.id)?.revoked).not.toBeNull();
    const ids = new Set(listed.map((k) => k.id));
    expect(made.filter((m) => !ids.has(m.id))).toEqual([]);
    // What the gateway makes of the file: the revoked key refused, every new key served at once.
    expect((await g.verify(GOLD, { key: doomed.key })).status).toBe(401);
    const statuses = await Promise.all(made.map(async (m) => (await g.verify(GOLD, { key: m.key })).status));
    expect(statuses).toEqual(made.map(() => 200));
    // No lock or private lock file is left beside the key file.
    expect((await readdir(dirname(project.apiKeysFile))).filter((name) => name.includes('.lock'))).toEqual([]);
  });

  it('a lock left by a process that no longer exists is taken over', async () => {
    const project = await makeProject();
    // The pid of a process that has exited: it holds nothing any more.
    const gone = spawn(process.execPath, ['-e', '']);
    await waitForExit(gone, 'a process that exits at once');
    await writeFile(`${project.apiKeysFile}.lock`, JSON.stringify({ pid: gone.pid, host: hostname(), token: 'left-behind' }));
    const r = await runCli(['apikey', 'create', '--label', 'after a crash', '--api-keys', project.apiKeysFile]);
    expect(r.code, r.stderr).toBe(0);
    expect((await listApiKeys(project.apiKeysFile)).map((k) => k.label)).toContain('after a crash');
    expect((await readdir(dirname(project.apiKeysFile))).filter((name) => name.includes('.lock'))).toEqual([]);
  });
});
