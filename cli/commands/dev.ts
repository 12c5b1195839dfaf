import { mkdtemp, rm } from 'node:fs/promises';
import { type AddressInfo, createServer as createNetServer, type Server as NetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KEY_SET_PATH } from '@merchant-verify/verifier';
import { createApiKey, listApiKeys, revokeApiKey } from '../../access/api-keys.ts';
import type { BuildSummary } from '../../builder/build.ts';
import { ConfigError } from '../../core/errors/errors.ts';
import { LOG_VKEY_PATH } from '../../core/layout.ts';
import { createLogKey, loadLogKey, logOrigin } from '../../keyring/log-key.ts';
import { createOhttpKey, loadOhttpKey } from '../../keyring/ohttp-key.ts';
import { keygen, loadActiveKey } from '../../keyring/signing-keys.ts';
import { runAction } from '../cli-output.ts';
import { defineCommand } from '../command.ts';
import { apiKeysFileOf, commandOptions, resolveNow } from '../config.ts';
import { writeDatedAudits } from '../dev-audits.ts';
import type { CliIo, CliOutput } from '../io.ts';
import { BUILD_OPTIONS, buildFromArgs, formatSummary } from './build.ts';
import { gatewayOptions, SERVE_OPTIONS } from './serve.ts';

const options = commandOptions(...BUILD_OPTIONS, ...SERVE_OPTIONS);

const DEV_LABEL = 'dev (mvr dev)';

export default defineCommand({
  meta: {
    name: 'dev',
    description:
      'Development: the port checked first, then a signing key if missing, the sample audits dated to today and built, a fresh dev API key, the gateway, and a curl line',
  },
  args: options.describe({
    records: 'records folder',
    workers:
      "build worker threads (default none up to a MiB of audits, signed on the build's thread; then one per MiB, at most one per core plus one)",
  }),
  run: ({ args, io }) =>
    runAction(io, false, async () => {
      const config = options.resolve(args, io.env);
      // The port first: a second `mvr dev` beside a running one must stop before it rebuilds the
      // records or revokes the dev key the first one printed. It is held until the gateway takes it.
      const port = await holdPort(config.host, config.port);
      let dev: { key: string; revoked: number };
      try {
        await ensureDevKeys(config, io.stderr);
        io.stderr.write(formatSummary(await buildDated(args, config.audits, io)));
        dev = await freshDevApiKey(apiKeysFileOf(config));
      } finally {
        await port.release();
      }

      const [{ openJsonLog }, { closeOnSignals, startGateway }] = await Promise.all([
        import('../../gateway/json-log.ts'),
        import('../../gateway/server.ts'),
      ]);
      const log = openJsonLog();
      const settings = await gatewayOptions(config, {}, log, io.env);
      const gateway = await startGateway(settings);
      io.stderr.write(devBanner(gateway.url, gateway.metricsUrl, dev, config.public, await freePortAfter(config.host, config.port)));
      closeOnSignals(gateway, log);
    }),
});

/** A signing key, a log key and an Oblivious HTTP key for development, each made when the keys folder has none. */
async function ensureDevKeys(
  config: {
    keys: string;
    signingKey?: string | undefined;
    logKey?: string | undefined;
    issuer: string;
  },
  stderr: CliOutput,
): Promise<void> {
  if (!(await loadActiveKey(config.keys, config.signingKey))) {
    const kid = await keygen(config.keys);
    stderr.write(`mvr dev: created development signing key ${kid} in ${config.keys}\n`);
  }
  if (!(await loadLogKey(config.keys, config.logKey))) {
    const logKey = await createLogKey(config.keys, logOrigin(config.issuer));
    stderr.write(`mvr dev: created development log key ${logKey.name} in ${config.keys}\n`);
  }
  if (!(await loadOhttpKey(config.keys))) {
    await createOhttpKey(config.keys);
    stderr.write(`mvr dev: created development Oblivious HTTP key in ${config.keys}\n`);
  }
}

/**
 * Only hashes are stored, so an earlier dev key cannot be shown again: each start makes a new one
 * and revokes the dev keys before it, while this run holds the port (so never the key of a gateway
 * still running), and before the gateway starts (so it starts with a live key). Keys with other
 * labels are left alone.
 */
async function freshDevApiKey(apiKeysFile: string): Promise<{ key: string; revoked: number }> {
  let revoked = 0;
  for (const old of await listApiKeys(apiKeysFile)) {
    if (old.label !== DEV_LABEL || old.revoked) continue;
    await revokeApiKey(apiKeysFile, old.id);
    revoked++;
  }
  return { key: (await createApiKey(apiKeysFile, DEV_LABEL)).key, revoked };
}

/**
 * What `mvr dev` prints once the gateway is up: where it is, a curl line and an `mvr verify` line
 * with the new key, and the same line with the key set and log key pinned from the project's files.
 */
function devBanner(
  url: string,
  metricsUrl: string | null,
  { key, revoked }: { key: string; revoked: number },
  publicDir: string,
  freePort: number,
): string {
  const verify = `npx mvr verify acme-outdoor.example --base-url ${url} --api-key ${key} --log`;
  return [
    '',
    `merchant-verify gateway on ${url}`,
    '',
    'Fetch a signed record:',
    `  curl -sS -H 'Authorization: Bearer ${key}' '${url}/v1/verify?domain=acme-outdoor.example'`,
    '',
    'Fetch it, verify its signature against the published key set, and its proof against the public log',
    '(both keys taken from this gateway on first use, as its output says):',
    `  ${verify}`,
    'The same, with the keys pinned from the project files (what a verifier elsewhere keeps):',
    `  ${verify} --trusted-keys ${join(publicDir, KEY_SET_PATH)} --log-key ${join(publicDir, LOG_VKEY_PATH)}`,
    '',
    devKeyNote(revoked),
    `Another port: npm start -- --port ${freePort} (or PORT=${freePort} npm start).`,
    '',
    `Key set: ${url}/.well-known/merchant-verify-keys.json   Log: ${url}/log/checkpoint   OpenAPI: ${url}/openapi.json   MCP: ${url}/mcp`,
    ...(metricsUrl ? [`Metrics (Prometheus): ${metricsUrl}`] : []),
    'Ctrl-C stops the gateway.',
    '',
  ].join('\n');
}

/** Where a user sees it: the key above is new, and the ones earlier starts printed no longer work. */
function devKeyNote(revoked: number): string {
  const earlier =
    revoked === 0
      ? 'no earlier development key was live'
      : `the ${revoked === 1 ? 'key' : `${revoked} keys`} printed by an earlier start ${revoked === 1 ? 'is' : 'are'} now revoked`;
  return `The API key above is new: each start makes one and revokes the one before (${earlier}; keys you made with mvr apikey are left alone).`;
}

/**
 * Builds the audits as `mvr build` would, from a copy dated to today (see writeDatedAudits), and
 * says so: the records of a development build should read as current on the day it runs.
 */
async function buildDated(args: Record<string, unknown>, auditsDir: string, io: CliIo): Promise<BuildSummary> {
  const dir = await mkdtemp(join(tmpdir(), 'mvr-dev-audits-'));
  try {
    const now = await resolveNow(undefined, io.env);
    const dated = await writeDatedAudits(auditsDir, dir, now);
    const moved =
      dated.shiftDays === 0
        ? 'as they are'
        : `moved ${Math.abs(dated.shiftDays)} day${Math.abs(dated.shiftDays) === 1 ? '' : 's'} ${dated.shiftDays > 0 ? 'later' : 'earlier'}`;
    io.stderr.write(
      `mvr dev: dated the ${dated.audits} audits of ${auditsDir} relative to today (${moved}: the typical audit was made ${dated.ageDays} days ago); the files are unchanged\n`,
    );
    return await buildFromArgs({ ...args, audits: dir }, io);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Binds host:port now and keeps it until `release`; a port in use is INVALID_CONFIG (exit 2), before
 * anything changed, naming a port that is free now.
 */
async function holdPort(host: string, port: number): Promise<{ release(): Promise<void> }> {
  const server = createNetServer();
  await listening(server, host, port).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code === 'EADDRINUSE' || error.code === 'EACCES') {
      const free = await freePortAfter(host, port);
      throw new ConfigError(
        `--port / PORT ${port}: cannot listen on ${host}:${port} (in use by another process, another mvr dev perhaps, or not allowed); nothing was changed. Port ${free} is free: npm start -- --port ${free}`,
      );
    }
    throw error;
  });
  return { release: () => closed(server) };
}

/**
 * A port free on `host` now, for a hint: the first of the ten after `port` that can be bound, else
 * one the system picks. Only a suggestion: another process may take it before the user does.
 */
async function freePortAfter(host: string, port: number): Promise<number> {
  for (let candidate = port + 1; candidate <= Math.min(port + 10, 65_535); candidate++) {
    const server = createNetServer();
    const bound = await listening(server, host, candidate).then(
      () => true,
      () => false,
    );
    if (bound) {
      await closed(server);
      return candidate;
    }
  }
  const server = createNetServer();
  await listening(server, host, 0);
  const picked = (server.address() as AddressInfo).port;
  await closed(server);
  return picked;
}

const listening = (server: NetServer, host: string, port: number) =>
  new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port, exclusive: true }, resolve);
  });
const closed = (server: NetServer) => new Promise<void>((resolve) => server.close(() => resolve()));
