/**
 * Credentials for s3:// from a named profile in a shared credentials file, through the real
 * commands; clear failures when there are none or half a key pair; and the AWS SDK loaded only
 * where it is used. The S3 test server checks every signature against the key pairs it knows.
 */
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3ConfigFromEnv } from '../../storage/s3/bucket.ts';
import { awsCommandEnv } from '../support/aws-env.ts';
// In a child process: the AWS SDK's credential chain reads the process's own environment and ~/.aws.
import { spawnCli } from '../support/cli.ts';
import { cleanup } from '../support/gateway.ts';
import { makeProject, type Project, ROOT, removeTempDirs, tempDir } from '../support/project.ts';
import { publishTo } from '../support/s3-records.ts';
import { S3_ACCESS_KEY, S3_SECRET_KEY, startS3, type TestS3 } from '../support/s3-server.ts';

const BUCKET = 'mvr-creds';
const PROFILE = { accessKeyId: 'AKIAPROFILE000000003', secretAccessKey: 'profile-secret-0123456789abcdef' };

let s3: TestS3;
let project: Project;
let home: string;

/** The environment of a command on AWS: no key pair, no ~/.aws of the machine, no instance metadata. */
const awsEnv = (extra: Record<string, string>) => awsCommandEnv(home, s3.endpoint, extra);

beforeAll(async () => {
  s3 = await startS3([BUCKET], { credentials: [{ accessKeyId: S3_ACCESS_KEY, secretAccessKey: S3_SECRET_KEY }, PROFILE] });
  home = await tempDir();
  project = await makeProject();
  await publishTo(s3, BUCKET, 'prod', project);
}, 60_000);
afterAll(async () => {
  await cleanup();
  await s3.close();
  await removeTempDirs();
});

describe('a named profile in the shared credentials file', () => {
  const profileFiles = async (secret: string) => {
    const dir = await tempDir();
    await writeFile(
      join(dir, 'credentials'),
      `[default]\naws_access_key_id = AKIANOTTHISONE\naws_secret_access_key = nope\n\n[mvr-test]\naws_access_key_id = ${PROFILE.accessKeyId}\naws_secret_access_key = ${secret}\n`,
    );
    await writeFile(join(dir, 'config'), '[profile mvr-test]\nregion = us-east-1\n');
    return { AWS_PROFILE: 'mvr-test', AWS_SHARED_CREDENTIALS_FILE: join(dir, 'credentials'), AWS_CONFIG_FILE: join(dir, 'config') };
  };

  it("mvr publish and mvr pull sign with AWS_PROFILE's keys", async () => {
    const env = awsEnv(await profileFiles(PROFILE.secretAccessKey));
    const from = s3.signedWith.length;
    const published = await spawnCli(
      ['publish', '--records', project.recordsDir, '--public', project.publicDir, '--to', `s3://${BUCKET}/profile`],
      env,
    );
    expect(published, published.stderr).toMatchObject({ code: 0 });
    const pulledInto = join(await tempDir(), 'records');
    await mkdir(pulledInto);
    const pulled = await spawnCli(['pull', '--from', `s3://${BUCKET}/profile`, '--records', pulledInto], env);
    expect(pulled, pulled.stderr).toMatchObject({ code: 0 });
    expect(new Set(s3.signedWith.slice(from))).toEqual(new Set([PROFILE.accessKeyId]));
  });

  it('a wrong secret is refused by the bucket, and the command says so', async () => {
    const refused = s3.refused;
    const r = await spawnCli(
      ['pull', '--from', `s3://${BUCKET}/profile`, '--records', join(await tempDir(), 'records')],
      awsEnv(await profileFiles('not-the-secret')),
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/403/);
    expect(s3.refused).toBeGreaterThan(refused);
  });
});

// Side by side: neither signs a request, so neither touches the counts the tests above read.
describe.concurrent('clear failures', () => {
  it('no credentials anywhere: the command names where it looked', async ({ expect }) => {
    const r = await spawnCli(['pull', '--from', `s3://${BUCKET}/prod`, '--records', join(await tempDir(), 'records')], awsEnv({}));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /AWS credentials unavailable: none in AWS_ACCESS_KEY_ID\/AWS_SECRET_ACCESS_KEY, the shared config and credentials files, a web identity token, container credentials or instance metadata/,
    );
  });

  it('half a key pair is a configuration error (exit 2) naming the missing variable', async ({ expect }) => {
    expect(() => s3ConfigFromEnv({ AWS_ACCESS_KEY_ID: 'AKIAONLYTHEID' })).toThrow(
      /AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not/,
    );
    const r = await spawnCli(
      ['pull', '--from', `s3://${BUCKET}/prod`, '--records', join(await tempDir(), 'records')],
      awsEnv({ AWS_SECRET_ACCESS_KEY: 'only-the-secret' }),
    );
    expect(r).toMatchObject({ code: 2, stderr: expect.stringMatching(/AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not/) });
  });
});

describe('the AWS SDK costs nothing where it is not used', () => {
  it('is imported in one place, dynamically, so a gateway on a folder (or with a key pair) never loads it', async () => {
    const sources = (
      await Promise.all(
        ['cli', 'gateway', 'storage', 'service', 'access', 'keyring', 'builder', 'mcp', 'core'].map(async (dir) =>
          (await readdir(join(ROOT, dir), { recursive: true })).filter((f) => f.endsWith('.ts')).map((f) => join(dir, f)),
        ),
      )
    ).flat();
    const naming: string[] = [];
    for (const file of sources) {
      const text = await readFile(join(ROOT, file), 'utf8');
      if (!text.includes('@aws-sdk/')) continue;
      naming.push(file);
      // Only `import('@aws-sdk/...')`, never `from '@aws-sdk/...'` (a type-only import would be erased, but is not needed either).
      expect(text, file).not.toMatch(/from\s*['"]@aws-sdk\//);
      expect(text, file).toMatch(/import\(\s*['"]@aws-sdk\/credential-provider-node['"]\s*\)/);
    }
    expect(naming).toEqual(['storage/s3/credentials.ts']);
  });
});
