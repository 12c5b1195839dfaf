/** The environment of a command run as on AWS, for the tests of s3:// credentials. */
import { join } from 'node:path';
import { S3_REGION } from './s3-server.ts';

/**
 * No key pair, no ~/.aws of the machine (HOME is `home`), no instance metadata; the region and the
 * endpoint of the S3 test server; then `extra`.
 */
export const awsCommandEnv = (home: string, endpoint: string, extra: Record<string, string>): Record<string, string | undefined> => ({
  HOME: home,
  AWS_ACCESS_KEY_ID: undefined,
  AWS_SECRET_ACCESS_KEY: undefined,
  AWS_SESSION_TOKEN: undefined,
  AWS_PROFILE: undefined,
  AWS_SHARED_CREDENTIALS_FILE: join(home, 'no-credentials'),
  AWS_CONFIG_FILE: join(home, 'no-config'),
  AWS_EC2_METADATA_DISABLED: 'true',
  AWS_REGION: S3_REGION,
  AWS_ENDPOINT_URL_S3: endpoint,
  ...extra,
});
