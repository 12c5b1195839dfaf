import { defineCommand } from 'citty';
import { createApiKey, listApiKeys, revokeApiKey } from '../../service/api-keys.ts';
import { openJsonLog } from '../../gateway/json-log.ts';
import { closeOnSignals, startGateway } from '../../gateway/server.ts';
import { apiKeysFileOf, commandOptions } from '../config.ts';
import { runAction } from '../cli-output.ts';
import { keygen, loadActiveKey } from '../../service/signing-keys.ts';
import { createLogKey, loadLogKey, logOrigin } from '../../service/log-key.ts';
import { BUILD_OPTIONS, buildFromArgs, formatSummary } from './build.ts';
import { gatewayOptions, SERVE_OPTIONS } from './serve.ts';

const options = commandOptions(...BUILD_OPTIONS, ...SERVE_OPTIONS);

const DEV_LABEL = 'dev (mvr dev)';

export default defineCommand({
  meta: { name: 'dev', description: 'Development: signing key if missing, sample records built, a fresh dev API key, the gateway, and a curl line' },
  args: options.args,
  run: ({ args }) =>
    runAction(false, async () => {
      const env = process.env;
      const config = options.resolve(args, env);
      if (!(await loadActiveKey(config.keys, config.signingKey))) {
        const kid = await keygen(config.keys);
        process.stderr.write(`mvr dev: created development signing key ${kid} in ${config.keys}\n`);
      }
      if (!(await loadLogKey(config.keys, config.logKey))) {
        const logKey = await createLogKey(config.keys, logOrigin(config.issuer));
        process.stderr.write(`mvr dev: created development log key ${logKey.name} in ${config.keys}\n`);
      }
      process.stderr.write(formatSummary(await buildFromArgs(args, env)));

      // Only hashes are stored, so an earlier dev key cannot be shown again: each start makes a
      // new one and revokes the dev keys before it. Keys with other labels are left alone.
      const apiKeysFile = apiKeysFileOf(config);
      for (const old of await listApiKeys(apiKeysFile)) if (old.label === DEV_LABEL && !old.revoked) await revokeApiKey(apiKeysFile, old.id);
      const { key } = await createApiKey(apiKeysFile, DEV_LABEL);

      const log = openJsonLog();
      const settings = await gatewayOptions(config, {}, log);
      const gateway = await startGateway(settings);
      const url = gateway.url;
      process.stderr.write(
        [
          '',
          `merchant-verify gateway on ${url}`,
          '',
          'Fetch a signed record:',
          `  curl -sS -H 'Authorization: Bearer ${key}' '${url}/v1/verify?domain=acme-outdoor.example'`,
          '',
          'Fetch it, verify its signature against the published key set, and its proof against the public log:',
          `  node bin/mvr.js verify acme-outdoor.example --base-url ${url} --api-key ${key} --log`,
          '',
          `Key set: ${url}/.well-known/merchant-verify-keys.json   Log: ${url}/log/checkpoint   OpenAPI: ${url}/openapi.json   MCP: ${url}/mcp`,
          ...(gateway.metricsUrl ? [`Metrics (Prometheus): ${gateway.metricsUrl}`] : []),
          'Ctrl-C stops the gateway.',
          '',
        ].join('\n'),
      );
      closeOnSignals(gateway, log);
    }),
});
