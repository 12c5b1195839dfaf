import { defineCommand } from 'citty';
import { jsonLogger, startGateway, closeOnSignals, type GatewayOptions } from '../../gateway/server.ts';
import { nonNegativeInt, positiveInt, resolveApiKeysFile, resolveFolders, resolveIssuer, resolvePort, serveArgs, type Env } from '../config.ts';
import { runAction } from '../cli-output.ts';
import { loadActiveKey } from '../keystore.ts';
import { ConfigError } from '../../core/errors.ts';
import { runAsCluster } from '../../gateway/cluster.ts';

export default defineCommand({
  meta: { name: 'serve', description: 'Run the gateway: key-gated GET /v1/verify, the key set, schema, OpenAPI, health and MCP' },
  args: serveArgs,
  run: ({ args }) =>
    runAction(false, async () => {
      const options = await gatewayOptionsFromArgs(args, process.env);
      const workers = positiveInt('--workers / MVR_WORKERS', args.workers ?? process.env.MVR_WORKERS, 1);
      if (workers > 1 && options.port === 0) throw new ConfigError('--workers needs a fixed --port: the processes share one');
      if (runAsCluster(workers, options.log)) return;
      const gateway = await startGateway(options);
      options.log({ level: 'info', msg: 'listening', url: gateway.url });
      closeOnSignals(gateway, options.log);
    }),
});

/** Resolves every gateway option once, from flags, then env, then defaults (shared with `mvr dev`). */
export async function gatewayOptionsFromArgs(args: Record<string, unknown>, env: Env): Promise<GatewayOptions> {
  const str = (k: string) => (typeof args[k] === 'string' ? (args[k] as string) : undefined);
  const folders = resolveFolders({ records: str('records'), public: str('public'), keys: str('keys') }, env);
  const { issuer, schemaUrl } = resolveIssuer({ issuer: str('issuer'), 'schema-url': str('schema-url') }, env);
  let unverifiedSigner = null;
  if (args['sign-unverified']) {
    unverifiedSigner = await loadActiveKey(folders.keysDir, env.MVR_SIGNING_KEY);
    if (!unverifiedSigner) throw new ConfigError('--sign-unverified needs a signing key (MVR_SIGNING_KEY or keys/active)');
  }
  const recordsUrl = [str('records'), env.MVR_RECORDS_DIR].find((v) => v && /^https?:\/\//i.test(v));
  return {
    recordsDir: recordsUrl ?? folders.recordsDir,
    publicDir: folders.publicDir,
    apiKeysFile: resolveApiKeysFile({ keys: str('keys'), 'api-keys': str('api-keys') }, env),
    issuer,
    schemaUrl,
    host: str('host') || env.HOST || '127.0.0.1',
    port: resolvePort(str('port'), env),
    cacheBytes: positiveInt('--cache-mb / MVR_CACHE_MB', str('cache-mb') ?? env.MVR_CACHE_MB, 64) * 1024 * 1024,
    refreshMs: 250,
    unverifiedSigner,
    log: jsonLogger,
    accessLog: !args.quiet,
    fastLane: args['fast-lane'] !== false,
    rateLimitPerMinute: nonNegativeInt('--rate-limit / MVR_RATE_LIMIT', str('rate-limit') ?? env.MVR_RATE_LIMIT, 6000),
    unauthenticatedPerMinute: nonNegativeInt('--unauth-rate-limit / MVR_UNAUTH_RATE_LIMIT', str('unauth-rate-limit') ?? env.MVR_UNAUTH_RATE_LIMIT, 600),
  };
}
