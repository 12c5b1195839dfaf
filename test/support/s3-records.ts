/**
 * Records published to the S3 test server, for the s3:// tests: a bucket client under a prefix,
 * a build uploaded there (as `mvr publish --to s3://` does), and a test gateway reading it.
 */
import { uploadBuild } from '../../builder/publish.ts';
import type { UploadOptions } from '../../builder/publish-plan.ts';
import { openStore } from '../../storage/open.ts';
import { parseS3Url, S3Bucket, s3ConfigFromEnv } from '../../storage/s3/bucket.ts';
import { startTestGateway, type TestGateway, trustingProject } from './gateway.ts';
import type { Project } from './project.ts';
import type { TestS3 } from './s3-server.ts';

/** The bucket `name` under `prefix` on the test server, signed with `env`'s credentials. */
export const bucketAt = (s3: TestS3, name: string, prefix: string, env: Record<string, string> = s3.env) =>
  new S3Bucket(parseS3Url(`s3://${name}/${prefix}`), s3ConfigFromEnv(env));

/**
 * Uploads `p`'s live build (and its kept builds) to `s3://name/prefix` as `mvr publish` does, with
 * its bulk-transfer timeouts: a gateway lookup's 2 s per request timed out here on a loaded machine.
 * `onProgress` is told of each object uploaded (`live.json`, naming the build live, is the last);
 * `more` sets the requests in flight and the part size.
 */
export function publishTo(
  s3: TestS3,
  name: string,
  prefix: string,
  p: Project,
  onProgress?: UploadOptions['onProgress'],
  more: Pick<UploadOptions, 'concurrency' | 'partBytes'> = {},
) {
  const to = openStore({ url: `s3://${name}/${prefix}`, s3: s3ConfigFromEnv(s3.env), bulk: true, flag: '--to' });
  return uploadBuild({ recordsDir: p.recordsDir, publicDir: p.publicDir, to, onProgress, ...more }).finally(() => to.close());
}

/** A test gateway for `p`'s API keys whose records are `s3://name/prefix`, trusting `p`'s published key set. */
export const gatewayOnBucket = async (s3: TestS3, name: string, prefix: string, p: Project): Promise<TestGateway> =>
  startTestGateway(p, {
    records: { url: `s3://${name}/${prefix}`, s3: s3ConfigFromEnv(s3.env), publicDir: '/nonexistent' },
    trust: await trustingProject(p),
  });
