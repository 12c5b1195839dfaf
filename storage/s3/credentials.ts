import { ConfigError, StoreUnavailableError } from '../../core/errors.ts';

/** One set of AWS credentials; `expiration` when they are temporary (a role's). */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  expiration?: Date;
}

/**
 * Gives the credentials to sign the next S3 request with: the same object for as long as they
 * hold, a new one once they were refreshed. Rejects with a message that says what was tried.
 */
export type CredentialSource = () => Promise<AwsCredentials>;

/** Credentials that never change (the access key pair in the environment). */
export function fixedCredentials(credentials: AwsCredentials): CredentialSource {
  const held = Promise.resolve(credentials);
  return () => held;
}

/**
 * The credentials for s3:// from the standard AWS settings, as every AWS tool finds them:
 *
 * - `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` (and `AWS_SESSION_TOKEN`) in `env`, used as
 *   they are, without loading the AWS SDK (the first link of AWS's own chain); one of the two
 *   without the other is a configuration error, not a reason to look elsewhere;
 * - otherwise the AWS SDK's default provider chain ({@link awsProviderChain}).
 *
 * `AWS_PROFILE` always goes to the chain, as the AWS SDK prefers a named profile to keys.
 */
export function credentialsFromEnv(env: Record<string, string | undefined>): CredentialSource {
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (Boolean(accessKeyId) !== Boolean(secretAccessKey)) {
    const [set, missing] = accessKeyId ? ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'] : ['AWS_SECRET_ACCESS_KEY', 'AWS_ACCESS_KEY_ID'];
    throw new ConfigError(
      `${set} is set but ${missing} is not: set both, or neither to take credentials from AWS_PROFILE, web identity, the container or the instance`,
    );
  }
  if (accessKeyId && secretAccessKey && !env.AWS_PROFILE)
    return fixedCredentials({ accessKeyId, secretAccessKey, sessionToken: env.AWS_SESSION_TOKEN || undefined });
  return awsProviderChain(env.AWS_PROFILE || undefined);
}

/**
 * The AWS SDK's default credential provider chain (@aws-sdk/credential-provider-node): the
 * environment, the shared config and credentials files (`AWS_PROFILE`, SSO, credential_process),
 * a web identity token (`AWS_WEB_IDENTITY_TOKEN_FILE` and `AWS_ROLE_ARN`, as on EKS), container
 * credentials (`AWS_CONTAINER_CREDENTIALS_FULL_URI` or `_RELATIVE_URI`, as on ECS and EKS Pod
 * Identity) and the instance metadata service (EC2). The SDK reads these from the process's own
 * environment and files, not from a given object.
 *
 * The SDK keeps the credentials it found and asks again when they are within five minutes of
 * their expiration: in the background while they still hold (requests keep being signed with
 * them), waiting for the new ones once they have expired. A failed refresh keeps the old ones
 * until they expire. The SDK is loaded on the first call, so a gateway on a folder never loads it.
 */
export function awsProviderChain(profile?: string): CredentialSource {
  let provider: Promise<() => Promise<AwsCredentials>> | null = null;
  return async () => {
    provider ??= import('@aws-sdk/credential-provider-node').then(({ defaultProvider }) => defaultProvider(profile ? { profile } : {}));
    try {
      return await (await provider)();
    } catch (error) {
      const message = (error as Error).message;
      const why = /from any providers/i.test(message)
        ? `none in AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, the shared config and credentials files${profile ? ` (profile ${profile})` : ''}, a web identity token, container credentials or instance metadata`
        : message;
      // No `cause`: the message says it all, and the gateway answers with an error's cause when it has one.
      throw new StoreUnavailableError(`AWS credentials unavailable: ${why}`);
    }
  };
}
