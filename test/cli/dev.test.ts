/**
 * `npm start` is `mvr dev`: keys made if missing, the samples built, a dev API key, the gateway,
 * and a curl line and a verify line that work as printed. Run here as a new user would, in an
 * empty project folder, and the printed lines are then run as they are.
 */
import { spawn } from 'node:child_process';
import { cp, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../support/cli.ts';
import { removeTempDirs, ROOT, SAMPLE_AUDITS, tempDir } from '../support/project.ts';

afterAll(removeTempDirs);

describe('mvr dev (npm start)', () => {
  it('prints a curl line and a verify --log line that work as pasted; makes both keys, 0600', async () => {
    const dir = await tempDir('mvr-dev-');
    await cp(SAMPLE_AUDITS, join(dir, 'audits'), { recursive: true });
    const child = spawn(process.execPath, [join(ROOT, 'bin/mvr.js'), 'dev', '--port', '0'], { cwd: dir, env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let stderr = '';
      await new Promise<void>((resolve, reject) => {
        child.stderr.setEncoding('utf8').on('data', (s: string) => {
          stderr += s;
          if (stderr.includes('Ctrl-C stops the gateway.')) resolve();
        });
        child.on('exit', (code) => reject(new Error(`mvr dev exited ${code}: ${stderr}`)));
      });
      expect((await stat(join(dir, 'keys/log.key'))).mode & 0o777).toBe(0o600);
      const curl = /curl -sS -H 'Authorization: Bearer ([^']+)' '([^']+)'/.exec(stderr);
      expect(curl, stderr).not.toBeNull();
      const res = await fetch(curl![2]!, { headers: { authorization: `Bearer ${curl![1]}` } });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ domain: 'acme-outdoor.example', status: 'verified' });
      const verifyLine = /node bin\/mvr\.js (verify .+)$/m.exec(stderr)![1]!;
      const verified = await runCli(verifyLine.split(' '));
      expect(verified.code, verified.stderr).toBe(0);
      expect(verified.stdout).toMatch(/signature {2}valid/);
      expect(verified.stdout).toMatch(/log {8}included: entry \d+ of 33/);
    } finally {
      child.kill('SIGTERM');
    }
  });
});
