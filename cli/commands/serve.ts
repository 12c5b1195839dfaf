import { ConfigError } from '../../core/errors/errors.ts';
import type { JsonLog } from '../../gateway/json-log.ts';
import type { GatewayOptions } from '../../gateway/server.ts';
import { loadOhttpKey } from '../../keyring/ohttp-key.ts';
import { readPolicyFile } from '../../witness/policy-file.ts';
import { runAction } from '../cli-output.ts';
import { defineCommand } from '../command.ts';
import { apiKeysFileOf, type Config, commandOptions, type Env, issuerOf, recordsStoreOf, schemaUrlOf } from '../config.ts';
import { TRUST_OPTIONS, trustOf, unsignedArg } from '../trust-options.ts';
import { WITNESS_POLICY_SERVED } from '../witness-policy.ts';

/** The options `mvr serve` reads (and `mvr dev`, which serves too). */
export const SERVE_OPTIONS = [
  'records',
  'public',
  'keys',
  'apiKeys',
  'redis',
  'issuer',
  'schemaUrl',
  'port',
  'host',
  'metricsPort',
  'metricsHost',
  'cacheMb',
  'rateLimit',
  'unauthRateLimit',
  'streamsPerKey',
  'writeIdleMs',
  'trustProxy',
  'workers',
  'signingKey',
  'storeTimeoutMs',
  'witnessPolicy',
  ...TRUST_OPTIONS,
] as const;
const options = commandOptions(...SERVE_OPTIONS);

/** The flags of `mvr serve`. */
export const serveArgs = {
  ...options.describe({
    records: 'records: a folder, s3://BUCKET/PREFIX, or an http(s) origin URL',
    workers: 'gateway processes sharing the port (default 1)',
    witnessPolicy: WITNESS_POLICY_SERVED,
  }),
  quiet: { type: 'boolean', description: 'no access log (warnings and errors are still logged)' },
  ...unsignedArg,
} as const;

export default defineCommand({
  meta: { name: 'serve', description: 'Run the gateway: key-gated GET /v1/verify, the key set, schema, OpenAPI, health and MCP' },
  args: serveArgs,
  run: ({ args, io }) =>
    runAction(io, false, async () => {
      const config = options.resolve(args, io.env);
      // The gateway is loaded once the flags are read (`--help` and a usage error cost no server
      // start-up), and only by a process that serves: a cluster's primary only forks.
      const [{ openJsonLog }, { runAsCluster }] = await Promise.all([
        import('../../gateway/json-log.ts'),
        import('../../gateway/cluster.ts'),
      ]);
      const log = openJsonLog();
      const settings = await gatewayOptions(config, args, log, io.env);
      const workers = config.workers ?? 1;
      if (workers > 1 && settings.port === 0) throw new ConfigError('--workers needs a fixed --port: the processes share one');
      if (await runAsCluster(workers, log, settings.metrics)) return;
      const { closeOnSignals, startGateway } = await import('../../gateway/server.ts');
      // A process of a cluster hands its metrics to the primary, which serves them all.
      const gateway = await startGateway(workers > 1 && settings.metrics ? { ...settings, metrics: { toClusterPrimary: true } } : settings);
      log.log({ level: 'info', msg: 'listening', url: gateway.url });
      if (gateway.metricsUrl) log.log({ level: 'info', msg: 'serving metrics', url: gateway.metricsUrl });
      closeOnSignals(gateway, log);
    }),
});

/** The gateway's options from the resolved configuration (shared with `mvr dev`). */
export async function gatewayOptions(
  config: Config<(typeof SERVE_OPTIONS)[number]>,
  args: { quiet?: boolean; unsigned?: boolean; issuer?: unknown },
  log: JsonLog,
  env: Env,
): Promise<GatewayOptions> {
  const records = recordsStoreOf(config, env, config.storeTimeoutMs);
  const issuer = issuerOf(config, args, env);
  return {
    records,
    apiKeysFile: apiKeysFileOf(config),
    redisUrl: config.redis,
    issuer,
    schemaUrl: schemaUrlOf({ ...config, issuer }),
    host: config.host,
    port: config.port,
    cacheBytes: config.cacheMb * 1024 * 1024,
    refreshMs: 250,
    log: log.log,
    accessLog: !args.quiet,
    logRequest: log.request,
    metrics: config.metricsPort === undefined ? undefined : { listen: { host: config.metricsHost, port: config.metricsPort } },
    rateLimitPerMinute: config.rateLimit,
    unauthenticatedPerMinute: config.unauthRateLimit,
    streamsPerKey: config.streamsPerKey,
    connectionTimeouts: { writeIdleMs: config.writeIdleMs },
    trustProxy: config.trustProxy,
    witnessPolicy: config.witnessPolicy ? await readPolicyFile(config.witnessPolicy, '--witness-policy') : undefined,
    trust: await trustOf(config, args, records),
    // The keys folder's Oblivious HTTP key (mvr keygen --ohttp), when it holds one.
    ohttpKey: (await loadOhttpKey(config.keys)) ?? undefined,
  };
}
