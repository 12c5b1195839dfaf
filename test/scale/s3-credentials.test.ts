/**
 * Container credentials for s3:// as a deployment on AWS has them (ECS, EKS Pod Identity), through
 * the real commands: a credentials endpoint on loopback, refreshed before they expire. The S3 test
 * server checks every signature against the key pairs it knows, so a request signed with the
 * wrong credentials (or without its session token) is refused, and it records which key signed
 * each request it accepted. (A named profile and the clear failures are s3-credentials-profile.test.ts.)
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../access/api-keys.ts';
import { awsCommandEnv } from '../support/aws-env.ts';
import { cleanup } from '../support/gateway.ts';
import { liveRecords } from '../support/outputs.ts';
import { freePort } from '../support/ports.ts';
import { ISSUER, makeProject, type Project, ROOT, removeTempDirs, tempDir } from '../support/project.ts';
import { publishTo } from '../support/s3-records.ts';
import { S3_ACCESS_KEY, S3_SECRET_KEY, startS3, type TestS3, type TestS3Credentials } from '../support/s3-server.ts';
import { poll, waitForExit } from '../support/wait.ts';

const BUCKET = 'mvr-creds';
const ROLE_FIRST = {
  accessKeyId: 'ASIAROLEFIRST0000001',
  secretAccessKey: 'role-secret-first-0123456789abcdef',
  sessionToken: 'role-session-token-first',
};
const ROLE_SECOND = {
  accessKeyId: 'ASIAROLESECOND000002',
  secretAccessKey: 'role-secret-second-0123456789abcdef',
  sessionToken: 'role-session-token-second',
};
const ENDPOINT_TOKEN = 'pod-identity-authorization-token';

let s3: TestS3;
let project: Project;
let home: string;
let domains: string[];
const children: ChildProcess[] = [];
const servers: Server[] = [];

/**
 * A container credentials endpoint as ECS and EKS Pod Identity run one: each call (with the
 * authorization token) answers the next set of `sets`, the last one from then on.
 */
async function credentialsEndpoint(sets: { credentials: TestS3Credentials; expiresInMs: number }[]) {
  const state = { url: '', calls: 0 };
  const server = createServer((req, res) => {
    if (req.headers.authorization !== ENDPOINT_TOKEN) return void res.writeHead(401).end();
    const { credentials: c, expiresInMs } = sets[Math.min(state.calls++, sets.length - 1)]!;
    const body = {
      AccessKeyId: c.accessKeyId,
      SecretAccessKey: c.secretAccessKey,
      Token: c.sessionToken,
      Expiration: new Date(Date.now() + expiresInMs).toISOString(),
    };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/credentials`;
  return state;
}

/** The environment of a command on AWS: no key pair, no ~/.aws of the machine, no instance metadata. */
const awsEnv = (extra: Record<string, string>) => awsCommandEnv(home, s3.endpoint, extra);
const containerEnv = (url: string) =>
  awsEnv({ AWS_CONTAINER_CREDENTIALS_FULL_URI: url, AWS_CONTAINER_AUTHORIZATION_TOKEN: ENDPOINT_TOKEN });

beforeAll(async () => {
  s3 = await startS3([BUCKET], {
    credentials: [{ accessKeyId: S3_ACCESS_KEY, secretAccessKey: S3_SECRET_KEY }, ROLE_FIRST, ROLE_SECOND],
  });
  home = await tempDir();
  project = await makeProject();
  await publishTo(s3, BUCKET, 'prod', project);
  domains = [...(await liveRecords(project)).keys()];
}, 60_000);
afterAll(async () => {
  for (const child of children) child.kill('SIGTERM');
  for (const server of servers) server.close();
  await cleanup();
  await s3.close();
  await removeTempDirs();
});

describe('container credentials (ECS, EKS Pod Identity)', () => {
  it("mvr serve signs with the endpoint's credentials and takes the next set before the first expires", async () => {
    // The first set expires in 2 minutes: inside the SDK's 5-minute refresh window, so it is asked again at once.
    const endpoint = await credentialsEndpoint([
      { credentials: ROLE_FIRST, expiresInMs: 120_000 },
      { credentials: ROLE_SECOND, expiresInMs: 3_600_000 },
    ]);
    const { key } = await createApiKey(project.apiKeysFile, 'creds');
    const port = await freePort();
    const from = s3.signedWith.length;
    const child = spawn(
      process.execPath,
      [
        join(ROOT, 'bin/mvr.js'),
        'serve',
        '--port',
        String(port),
        '--records',
        `s3://${BUCKET}/prod`,
        '--public',
        '/nonexistent',
        '--api-keys',
        project.apiKeysFile,
        '--issuer',
        ISSUER,
        '--trusted-keys',
        project.keySetFile,
      ],
      {
        env: { PATH: process.env.PATH ?? '', ...(containerEnv(endpoint.url) as Record<string, string>) },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    children.push(child);
    let log = '';
    child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
    await poll(
      async () => log,
      (l) => l.includes('"msg":"listening"') || child.exitCode !== null,
      { timeoutMs: 20_000 },
    );
    expect(log).toContain('"msg":"listening"');
    // Each domain read once is one more GET to the bucket, signed with the credentials of that moment.
    let next = 0;
    const { value: signed } = await poll(
      async () => {
        const domain = domains[next++ % domains.length]!;
        const res = await fetch(`http://127.0.0.1:${port}/v1/verify?domain=${domain}`, { headers: { authorization: `Bearer ${key}` } });
        expect(res.status, `${domain}: ${await res.text()}\n${log}`).toBe(200);
        return s3.signedWith.slice(from);
      },
      (keys) => keys.includes(ROLE_SECOND.accessKeyId),
      { timeoutMs: 10_000 },
    );
    expect(signed[0]).toBe(ROLE_FIRST.accessKeyId);
    // Once the new set is there it is used for good, and the endpoint is not asked for every request.
    const switched = signed.indexOf(ROLE_SECOND.accessKeyId);
    for (let i = 0; i < 5; i++)
      await fetch(`http://127.0.0.1:${port}/v1/verify?domain=${domains[next++ % domains.length]}`, {
        headers: { authorization: `Bearer ${key}` },
      });
    const after = s3.signedWith.slice(from + switched);
    expect(after.length).toBeGreaterThan(5);
    expect(new Set(after)).toEqual(new Set([ROLE_SECOND.accessKeyId]));
    expect(endpoint.calls).toBe(2);
    expect(log).not.toMatch(/"level":"error"/);
    child.kill('SIGTERM');
    await waitForExit(child, 'mvr serve after SIGTERM', () => log);
  });

  it('mvr mcp over stdio reads records with them', async () => {
    const endpoint = await credentialsEndpoint([{ credentials: ROLE_SECOND, expiresInMs: 3_600_000 }]);
    const env = containerEnv(endpoint.url);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        join(ROOT, 'bin/mvr.js'),
        'mcp',
        '--records',
        `s3://${BUCKET}/prod`,
        '--public',
        '/nonexistent',
        '--issuer',
        ISSUER,
        '--trusted-keys',
        project.keySetFile,
      ],
      env: Object.fromEntries(
        Object.entries({ PATH: process.env.PATH ?? '', ...env }).filter((e): e is [string, string] => e[1] !== undefined),
      ),
      stderr: 'pipe',
    });
    const client = new Client({ name: 'mvr-creds-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const from = s3.signedWith.length;
      const result = (await client.callTool({ name: 'verify_merchant', arguments: { domain: domains[0]! } })) as {
        isError?: boolean;
        structuredContent?: { domain?: string };
      };
      expect(result.isError ?? false).toBe(false);
      expect(result.structuredContent?.domain).toBe(domains[0]);
      expect(s3.signedWith.slice(from)).toContain(ROLE_SECOND.accessKeyId);
      expect(endpoint.calls).toBe(1);
    } finally {
      await client.close();
    }
  });
});
