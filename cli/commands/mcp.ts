import { randomUUID } from 'node:crypto';
import { FetchFailedError, gatewaySource, KEY_SET_PATH } from '@merchant-verify/verifier';
import { boundedGet } from '../../clients/bounded-get.ts';
import { getFromGateway } from '../../clients/gateway-client.ts';
import { ConfigError, isErrorCode, MvrError } from '../../core/errors/errors.ts';
import { causeOf, httpCodeOf, withheldDetail } from '../../core/errors/problem-document.ts';
import { LOG_CHECKPOINT, LOG_DIR, LOG_VKEY_PATH } from '../../core/layout.ts';
import { readLimitOf } from '../../core/limits.ts';
import type { AbsenceLookup, BundleLookup, CompactLookup, HistoryLookup, ProofLookup, RecordLookup } from '../../mcp/server.ts';
import type { WitnessSource } from '../../mcp/witnessed.ts';
import { readPolicyFile } from '../../witness/policy-file.ts';
import { runAction } from '../cli-output.ts';
import { defineCommand } from '../command.ts';
import { type Config, commandOptions, issuerOf, recordsStoreOf, schemaUrlOf } from '../config.ts';
import type { CliIo } from '../io.ts';
import { TRUST_OPTIONS, trustOf, unsignedArg } from '../trust-options.ts';

const MCP_OPTIONS = [
  'baseUrl',
  'apiKey',
  'ohttpRelay',
  'records',
  'public',
  'issuer',
  'schemaUrl',
  'witnessPolicy',
  ...TRUST_OPTIONS,
] as const;
const options = commandOptions(...MCP_OPTIONS);
/** How often local records are re-checked for a new live build (ms). */
const LOCAL_REFRESH_MS = 1000;

export default defineCommand({
  meta: {
    name: 'mcp',
    description:
      'The MCP tools verify_merchant, verify_merchants and merchant_history over stdio, answering from a gateway (--base-url; the verify tools ask it by hash prefix unless a call sets private: false) or a local records folder',
  },
  args: {
    ...options.describe({
      records: 'records without --base-url: a folder, s3://BUCKET/PREFIX, or an http(s) origin URL',
      public: 'public folder (key set and log) without --base-url',
      witnessPolicy: "tlog-policy file of the log's witnesses: the tools say when the log was last witnessed",
      trustedKeys:
        'without --base-url: the record keys trusted (a JWK Set file); required with s3:// or http(s) records, default for a folder: its public key set as first read',
      ohttpRelay:
        "with --base-url: an Oblivious HTTP relay URL; private lookups (and the key set they are verified with) go sealed through it, so the gateway never sees this process's address beside a prefix; lookups by name go directly",
    }),
    ...unsignedArg,
  },
  run: ({ args, io }) =>
    runAction(io, false, async () => {
      const config = options.resolve(args, io.env);
      const { lookup, ...lookups } = await lookupFor(config, args, io);
      const policy = config.witnessPolicy ? (await readPolicyFile(config.witnessPolicy, '--witness-policy')).policy : undefined;
      const witness = policy && { policy, ...lookups.log, now: Date.now };
      // The MCP SDK and the records service are loaded once the flags are read, not for `--help`.
      const [{ serveStdio }, { createMcpServer }, { StdioAnsweringAll }] = await Promise.all([
        import('@modelcontextprotocol/server/stdio'),
        import('../../mcp/server.ts'),
        import('../../mcp/stdio.ts'),
      ]);
      // Every request read before stdin ends is answered, then the process exits. The protocol is
      // this process's own stdin and stdout (the transport's): `mvr mcp` is a server, a process of its own.
      // A failure whose result withholds its cause (a server failure: it may say where) has the cause on stderr, under an id the result quotes.
      const noteWithheld = (error: unknown, domain?: string) => {
        if (withheldDetail(httpCodeOf(error)) === null) return undefined;
        const id = randomUUID();
        io.stderr.write(`mvr mcp: request_id ${id}${domain ? ` (${domain})` : ''}: ${causeOf(error)}\n`);
        return id;
      };
      serveStdio(() => createMcpServer(lookup, { issuer: config.issuer, ...lookups, ...lookups.log, witness, noteWithheld }), {
        transport: new StdioAnsweringAll(),
      });
      // stdout is the protocol: anything human goes to stderr.
      io.stderr.write(
        `mvr mcp: verify_merchant, verify_merchants and merchant_history ready on stdio (${config.baseUrl ? 'gateway' : 'local records'})\n`,
      );
    }),
});

/** The package's gateway source with every request sealed through an Oblivious HTTP relay (loaded only then). */
async function relayedSource(baseUrl: string, apiKey: string, relayUrl: string) {
  const { fetchKeyConfig, ohttpSource } = await import('../../clients/ohttp-client.ts');
  return ohttpSource({ baseUrl, apiKey, relayUrl, keyConfig: await fetchKeyConfig(baseUrl) });
}

/** Where answers come from: a gateway (`--base-url`), or the records service over local records. */
async function lookupFor(
  config: Config<(typeof MCP_OPTIONS)[number]>,
  args: { unsigned?: boolean; issuer?: unknown },
  io: CliIo,
): Promise<{
  lookup: RecordLookup;
  keySetUrl: string;
  history: HistoryLookup;
  proof: ProofLookup;
  absence: AbsenceLookup;
  bundle: BundleLookup;
  /** Compact answers; `remote`: asked of a gateway, so the verify tools' `private` keeps the domain from it. */
  compact: CompactLookup;
  /** The live statement, where the bucket's bits are read before any bucket is sent. */
  lookupStatement: () => Promise<unknown>;
  remote: boolean;
  /** The key set the answers are verified with. */
  keySet: () => Promise<unknown>;
  /** The log's live checkpoint and key, for a witness policy and the log proofs. */
  log: Pick<WitnessSource, 'checkpoint' | 'vkey'>;
}> {
  if (config.baseUrl) {
    if (!config.apiKey) throw new ConfigError('--api-key (or MVR_API_KEY) is required with --base-url');
    const { keySetUrlOf } = await import('../../mcp/server.ts');
    const ask = gatewayGet(config.baseUrl, config.apiKey);
    // Through a relay: the key configuration fetched once, checked against the live statement before any bucket is sent.
    const relayed = config.ohttpRelay ? await relayedSource(config.baseUrl, config.apiKey, config.ohttpRelay) : null;
    return {
      lookup: (domain) => ask(`/v1/verify?domain=${encodeURIComponent(domain)}`),
      absence: async (domain) => JSON.parse((await ask(`/v1/absence?domain=${encodeURIComponent(domain)}`)).toString('utf8')),
      bundle: async (domain) => JSON.parse((await ask(`/v1/bundle?domain=${encodeURIComponent(domain)}`)).toString('utf8')),
      history: async (domain) =>
        JSON.parse((await ask(`/v1/history?domain=${encodeURIComponent(domain)}`)).toString('utf8')) as Awaited<ReturnType<HistoryLookup>>,
      proof: async (domain) => ({ proof: (await ask(`/v1/proof?domain=${encodeURIComponent(domain)}`)).toString('utf8') }),
      compact: gatewayCompact(relayed ?? gatewaySource({ baseUrl: config.baseUrl, apiKey: config.apiKey })),
      lookupStatement: gatewayStatement(relayed ?? gatewaySource({ baseUrl: config.baseUrl, apiKey: config.apiKey })),
      remote: true,
      keySet: (relayed ?? gatewaySource({ baseUrl: config.baseUrl })).keySet,
      keySetUrl: keySetUrlOf(config.baseUrl),
      log: {
        checkpoint: () => publicText(config.baseUrl!, `/${LOG_DIR}/${LOG_CHECKPOINT}`),
        vkey: () => publicText(config.baseUrl!, LOG_VKEY_PATH),
      },
    };
  }
  if (config.ohttpRelay) throw new ConfigError('--ohttp-relay carries lookups to a gateway: give --base-url too');
  const { openRecordsStack } = await import('../../service/records-stack.ts');
  const store = recordsStoreOf(config, io.env);
  const issuer = issuerOf(config, args, io.env);
  const { records, history, proofs, compact } = await openRecordsStack({
    store,
    refreshMs: LOCAL_REFRESH_MS,
    issuer,
    schemaUrl: schemaUrlOf({ ...config, issuer }),
    cacheBytes: 16 * 1024 * 1024,
    trust: await trustOf(config, args, store),
    onRejected: (domain, reason) => io.stderr.write(`mvr mcp: record rejected: ${domain}: ${reason}\n`),
    onBuildRefused: ({ build, reason }) =>
      io.stderr.write(`mvr mcp: build ${build} refused, the build served before (if any) stays served: ${reason}\n`),
    onReadRefused: (refusal) => io.stderr.write(`mvr mcp: ${refusal.message}; what was served before stays served\n`),
  });
  return {
    proof: (domain) => proofs.proofFor(domain),
    lookup: async (domain) => (await records.recordFor(domain)).bytes,
    absence: (domain) => proofs.absenceFor(domain),
    bundle: async (domain) => (await import('../../service/bundles.ts')).bundleFor(records, proofs, domain),
    compact: async (bits, hex) => (await compact.answer(String(bits), hex)).bytes,
    lookupStatement: async () => JSON.parse((await compact.head()).bytes.toString('utf8')),
    remote: false,
    history: (domain) => history.history(domain),
    keySet: async () => records.checkKeys().keySet,
    keySetUrl: `https://${config.issuer}${KEY_SET_PATH}`,
    log: {
      checkpoint: async () => (await proofs.file(LOG_CHECKPOINT))?.toString('utf8') ?? null,
      vkey: async () => (await proofs.vkey())?.toString('utf8') ?? null,
    },
  };
}

/** A public file of the gateway (no key); null when it has none. */
async function publicText(baseUrl: string, path: string): Promise<string | null> {
  const res = await boundedGet(`${baseUrl.replace(/\/+$/, '')}${path}`, { limit: readLimitOf(path) });
  return res.statusCode === 200 ? res.body.toString('utf8') : null;
}

/**
 * Compact answers from the package's own client, direct or through a relay (sized for them), whose
 * failures with a problem document of the gateway become that coded error, as {@link gatewayGet}'s do:
 * a refused key is UNAUTHORIZED whichever way the tool looked the domain up.
 */
function gatewayCompact(source: ReturnType<typeof gatewaySource>): CompactLookup {
  const compact = source.compact!;
  return (bits, hex) => coded(() => compact(bits, hex));
}

/** The gateway's live statement (`GET /v1/lookup`), failing with the gateway's own code as {@link gatewayCompact} does. */
function gatewayStatement(source: ReturnType<typeof gatewaySource>): () => Promise<unknown> {
  const statement = source.lookupStatement!;
  return () => coded(statement);
}

/** A gateway read whose refusal names a registry code (UNAUTHORIZED, INVALID_PREFIX...) fails with that code, as the tools report it. */
async function coded<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof FetchFailedError && error.problem !== undefined && isErrorCode(error.problem))
      throw new MvrError(error.problem, error.message);
    throw error;
  }
}

/** Asks a gateway; its problem documents become the same coded errors the local store throws. */
function gatewayGet(baseUrl: string, apiKey: string): (path: string) => Promise<Buffer> {
  return async (path) => {
    let answer;
    try {
      answer = await getFromGateway(baseUrl, apiKey, path);
    } catch (error) {
      throw new MvrError('STORE_UNAVAILABLE', (error as Error).message);
    }
    if (answer.ok) return answer.bytes;
    throw new MvrError(isErrorCode(answer.code) ? answer.code : 'UNAVAILABLE', answer.detail || `the gateway answered ${answer.status}`);
  };
}
