import { KEY_SET_PATH, LOG_KEY_PATH } from '@merchant-verify/verifier';
import { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { UsageError } from '../core/errors/errors.ts';
import { problemDocument } from '../core/errors/problem-document.ts';
import { normalizeDomain } from '../core/rules/domain.ts';
import { domainInputSchema } from '../core/rules/domain-input.ts';
import { parseMaxAge } from '../core/rules/max-age.ts';
import { recordSchema } from '../core/rules/record.ts';
import { absenceProofSchema } from '../core/schemas/absence.ts';
import { batchProblemResultSchema, batchRecordResultSchema, batchRequestSchema, MAX_BATCH } from '../core/schemas/batch.ts';
import { type HistoryAnswer, historyAnswerSchema } from '../core/schemas/history.ts';
import { PACKAGE_VERSION } from '../core/version.ts';
import type { TrustSources } from '../presentation/trust-report.ts';
import { lookupBatch } from '../service/batch.ts';
import { type CompactLookup, type PrivateSettings, verifyBatchPrivately, verifyPrivately } from './private.ts';
import { toolError } from './tool-error.ts';
import {
  type AbsenceLookup,
  type BundleLookup,
  type ProofLookup,
  type RecordLookup,
  verificationOutputSchema,
  verifyLookedUp,
} from './verification.ts';
import { WITNESSED_NOTE, type WitnessSource, witnessedItems } from './witnessed.ts';

export type { CompactLookup } from './private.ts';
export type { AbsenceLookup, BundleLookup, ProofLookup, RecordLookup } from './verification.ts';
/** The history of a normalized domain, as `GET /v1/history` answers it; throws MvrError. */
export type HistoryLookup = (domain: string) => Promise<HistoryAnswer>;

export const HISTORY_TOOL_NAME = 'merchant_history';

export const TOOL_NAME = 'verify_merchant';
export const BATCH_TOOL_NAME = 'verify_merchants';

/** Why a private verdict has no record. */
const PRIVATE_RECORD_NULL =
  "null for an audited domain looked up privately: its verdict comes from its map entry (status, tier, score, next audit, the record's hash under verification.entry), and the record itself was not fetched; get it with private: false (which names the domain) or from a mirror, and check it against record_hash";

/** The batch endpoint's answer, where a never-audited domain's record comes with the proof of that. */
const batchOutputSchema = z.strictObject({
  results: z.array(
    z.union([
      batchRecordResultSchema.extend({
        record: recordSchema.nullable().describe(PRIVATE_RECORD_NULL),
        absence_proof: absenceProofSchema.optional(),
        verification: verificationOutputSchema
          .omit({ record: true, bundle: true })
          .describe(
            `this server's verification of the domain's answer, as ${TOOL_NAME}'s structured result gives it (without the record, beside it)`,
          ),
      }),
      batchProblemResultSchema,
    ]),
  ),
});

/** What a server over a remote gateway (`mvr mcp --base-url`) says first in the verify tools' descriptions. */
const PRIVATE_BY_DEFAULT =
  "This server asks a remote gateway for a bucket of each domain's SHA-256, never the domain, unless you set private: false (see private); the verdict is the same, but an audited domain's comes from its entry in the build's map, so record is null.";

/** Written for an AI agent deciding whether to trust a shop. */
export function toolDescription(keySetUrl: string, witnessed = false, remote = false): string {
  return [
    ...(remote ? [PRIVATE_BY_DEFAULT] : []),
    'Look up the signed verification record of a merchant (online shop) by its domain or URL, before recommending it or buying from it.',
    'Any form works: "shop.example.com", "https://www.shop.example.com/product/1"; it is reduced to the registrable domain.',
    'status: "verified" = audited with sufficient evidence; "provisional" = audited but evidence was thin (tier is null, treat the score with caution);',
    '"flagged" = the auditor flagged this merchant, be careful; "unverified" = never audited (score null): no evidence either way, not a sign of fraud.',
    'An "unverified" answer of a plain lookup comes with a second text item, the absence proof (JSON): the build\'s signed statement and the two entries of its domain map around the domain;',
    'check it with verifyAbsence of @merchant-verify/verifier to know the domain was truly never audited, not hidden by a broken store or a proxy.',
    'tier: "gold" (score >= 80), "silver" (>= 50), "bronze" (>= 1) or null. score is out of max_score 100.',
    'last_audited_at tells how stale the record is; records are re-audited monthly (next_audit_at). Records never expire.',
    `The record is Ed25519-signed (key_id, signature) over its RFC 8785 canonical JSON without those two members; verify it with the public key set at ${keySetUrl}.`,
    'A record without a signature is unverified, never a pass.',
    "With include_proof: true, for an audited record of a plain lookup the second text item is a C2SP tlog-proof that this exact record is in the issuer's public append-only log",
    "(verify it with the log's key at /.well-known/merchant-verify-log.vkey), so the issuer cannot show other callers a different verdict;",
    'and the structured result carries the bundle: the answer with everything that proves it in one document, to keep and check offline with verifyBundle.',
    "The structured result is this server's verification of the answer: first valid, code and message (valid only when every check ran and held; a never-audited answer proven absent is NEVER_AUDITED, not valid),",
    'then each step (signature, absence, log, witnesses, staleness), what the record claims, and the record itself.',
    ...(witnessed ? [WITNESSED_NOTE] : []),
  ].join(' ');
}

/** Where the tools' answers come from: the lookups, and what the tool descriptions name. */
export interface McpServerOptions {
  keySetUrl: string;
  issuer: string;
  history: HistoryLookup;
  proof: ProofLookup;
  absence: AbsenceLookup;
  /** Offline bundles (`GET /v1/bundle`), for verify_merchant's `include_proof`. */
  bundle: BundleLookup;
  /** Compact answers (`GET /v1/lookup/{bits}/{hex}`), for the verify tools' `private` input. */
  compact: CompactLookup;
  /** The live statement (`GET /v1/lookup`): the bucket's bits are read there and sent once. */
  lookupStatement: () => Promise<unknown>;
  /** Whether the lookups go to a remote gateway (`mvr mcp --base-url`): only then does `private` hide the domain from the issuer. */
  remote: boolean;
  /** The key set the answers are verified with (the deployment's own). */
  keySet: () => Promise<unknown>;
  /** The log's note verifier key; null when the deployment keeps no log. */
  vkey: () => Promise<string | null>;
  /** With a witness policy, the verify tools say when the log's checkpoint was last witnessed; without, nothing changes. */
  witness?: WitnessSource;
  /**
   * Logs the cause of a failure whose result withholds it (a server failure: it may say where) and
   * returns the id it is logged under, which the result then carries; undefined for any other failure.
   */
  noteWithheld?: (error: unknown, domain?: string) => string | undefined;
}

/**
 * An MCP server with three tools: verify_merchant, verify_merchants and merchant_history. Failures
 * a caller can act on (an invalid domain, records unavailable) are tool results with
 * `isError: true` and the error code, not protocol errors.
 */
export function createMcpServer(lookup: RecordLookup, options: McpServerOptions): McpServer {
  const server = new McpServer({ name: 'merchant-verify', version: PACKAGE_VERSION }, { capabilities: { tools: {} } });
  registerVerifyTool(server, lookup, options);
  registerBatchTool(server, lookup, options);
  registerHistoryTool(server, options);
  return server;
}

/** `max_age` of both verify tools: the age of the cosignatures the server's witness policy asks for. */
const maxAgeInput = z
  .string()
  .optional()
  .describe(
    'With this server\'s witness policy: cosignatures older than this (a whole number then s, m, h or d, e.g. "36h") do not count, so an answer whose log checkpoint was not witnessed within it (a store rolled back with its old checkpoint) is refused NOT_WITNESSED; records, absences and private answers alike.',
  );

/** verify_merchant: one domain's record, with the proof that goes with it (absence, or log on request). */
function registerVerifyTool(server: McpServer, lookup: RecordLookup, options: McpServerOptions): void {
  server.registerTool(
    TOOL_NAME,
    {
      title: 'Verify a merchant',
      description: toolDescription(options.keySetUrl, options.witness !== undefined, options.remote),
      inputSchema: z.object({
        domain: domainInputSchema.describe(
          'The merchant domain or a URL on it, e.g. "acme-outdoor.example" or "https://www.acme-outdoor.example/tents".',
        ),
        include_proof: z
          .boolean()
          .optional()
          .describe(
            'Also return the proof that the record is in the public transparency log (a second text item), and the offline bundle (structured `bundle`).',
          ),
        private: z
          .boolean()
          .optional()
          .describe(
            privateDescription(
              options.remote,
              "no absence-proof item, and with include_proof the log step is the build statement's entry (the bundle and a record's tlog-proof name the domain, so they come only with the plain lookup)",
            ),
          ),
        max_age: maxAgeInput,
      }),
      outputSchema: verificationOutputSchema,
      annotations: { title: 'Verify a merchant', readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false },
    },
    async ({ domain, include_proof, private: asked, max_age }) => {
      try {
        // Over a remote gateway a domain is looked up by a bucket of its hash unless the caller asks otherwise.
        const privately = asked ?? options.remote;
        // Looked up and verified through the verifier package's online client, as `mvr verify` and the page do.
        const settings = {
          withLog: include_proof === true,
          policy: options.witness?.policy,
          ...(max_age === undefined ? {} : { maxAgeMs: maxAgeOf(max_age, options.witness) }),
          now: options.witness?.now(),
        };
        const verified = privately
          ? await verifyPrivately(normalizeDomain(domain), { ...options, trust: trustSourcesOf(options) }, settings)
          : await verifyLookedUp(normalizeDomain(domain), { lookup, ...options, trust: trustSourcesOf(options) }, settings);
        // The absence proof goes with every never-audited answer; a log proof only when asked for.
        const second = verified.structured.absence !== null || include_proof ? verified.proof : null;
        // The bundle names the domain: a private lookup never asks for one.
        const bundle = include_proof && !privately ? await options.bundle(normalizeDomain(domain)) : undefined;
        return {
          content: [
            { type: 'text' as const, text: verified.text },
            ...(second === null ? [] : [{ type: 'text' as const, text: second }]),
            ...(await witnessedItems(options.witness)),
          ],
          structuredContent: bundle === undefined ? verified.structured : { ...verified.structured, bundle },
        };
      } catch (error) {
        return toolError(error, options.noteWithheld?.(error));
      }
    },
  );
}

/** `max_age`, read as `mvr verify --max-age` reads it; it is the age of the cosignatures the server's witness policy asks for, so it needs one. */
function maxAgeOf(value: string, witness: WitnessSource | undefined): number {
  if (!witness)
    throw new UsageError('max_age applies to the cosignatures of a witness policy, and this server has none (mvr serve --witness-policy)');
  return parseMaxAge(value, 'max_age');
}

/**
 * What `private` does, said plainly: whether it hides the domain depends on where this server looks
 * records up, and so does its default. `differences` says how the tool's private answer differs.
 */
function privateDescription(remote: boolean, differences: string): string {
  const how = `Look each domain up by a bucket of its SHA-256 only (GET /v1/lookup after the live statement's bits: GET /v1/lookup/{bits}/{hex}): the answer holds the map entry of every audited domain of that bucket, proven complete, and gives the same verdict from the domain's entry (status, tier, score, next audit, the record's hash) or its proven absence; the record itself is not fetched (record is null; ask private: false, which names the domain, to get it); ${differences}.`;
  return remote
    ? `${how} This server asks a remote gateway, which then never learns the domain; it does so unless you set private: false, which sends the domain itself (GET /v1/verify).`
    : `${how} This server looks records up itself, so it already sees the domain you send: private hides nothing from it, and is off unless you set it. To keep the domain from the issuer, use mvr mcp --base-url or mvr verify --private on your own machine.`;
}

/** verify_merchants: up to MAX_BATCH domains, each a record (with its absence proof when never audited) or a problem. */
function registerBatchTool(server: McpServer, lookup: RecordLookup, options: McpServerOptions): void {
  server.registerTool(
    BATCH_TOOL_NAME,
    {
      title: 'Verify several merchants',
      description: [
        ...(options.remote ? [PRIVATE_BY_DEFAULT] : []),
        `Look up the signed verification records of 1 to ${MAX_BATCH} merchants at once, e.g. every shop in a list of search results; same records and meaning as ${TOOL_NAME}.`,
        'One result per domain, in the order given: {domain, record, verification} (looked up plainly, with absence_proof for an "unverified", never-audited domain: check it with verifyAbsence), or {domain, problem} (an RFC 9457 problem document) with problem.code INVALID_DOMAIN (not a valid merchant domain) or UNAVAILABLE (try that one again later).',
        `verification is this server's verdict on that domain's answer, as ${TOOL_NAME} gives it: valid, code and message first (a never-audited domain proven absent is NEVER_AUDITED, not valid), then each step.`,
        ...(options.witness ? [WITNESSED_NOTE] : []),
      ].join(' '),
      // The batch endpoint's rule for the list: a string that is no domain (empty, too long) is
      // INVALID_DOMAIN in its place, not a refused call.
      inputSchema: z.object({
        domains: batchRequestSchema.shape.domains.describe('Merchant domains or URLs on them, in any form verify_merchant takes.'),
        private: z
          .boolean()
          .optional()
          .describe(
            privateDescription(
              options.remote,
              'each bucket is asked once for every domain of the batch in it; no absence_proof (the compact answer proves an absence)',
            ),
          ),
        max_age: maxAgeInput,
      }),
      outputSchema: batchOutputSchema,
      annotations: {
        title: 'Verify several merchants',
        readOnlyHint: true,
        idempotentHint: true,
        destructiveHint: false,
        openWorldHint: false,
      },
    },
    async ({ domains, private: asked, max_age }) => {
      try {
        const settings = {
          withLog: false,
          policy: options.witness?.policy,
          ...(max_age === undefined ? {} : { maxAgeMs: maxAgeOf(max_age, options.witness) }),
          now: options.witness?.now(),
        };
        const privately = asked ?? options.remote;
        const results = privately ? await privateBatch(domains, options, settings) : await plainBatch(domains, lookup, options, settings);
        const content = [{ type: 'text' as const, text: JSON.stringify({ results }) }, ...(await witnessedItems(options.witness))];
        return { content, structuredContent: { results } };
      } catch (error) {
        return toolError(error, options.noteWithheld?.(error));
      }
    },
  );
}

/** verify_merchants in its plain form: each domain's record as the batch endpoint reads it, verified as verify_merchant verifies one. */
async function plainBatch(domains: string[], lookup: RecordLookup, options: McpServerOptions, settings: PrivateSettings) {
  return Promise.all(
    (await lookupBatch(domains, lookup)).map(async (r) => {
      if (!('record' in r))
        return { domain: r.domain, problem: problemDocument(r.problem, options.issuer, options.noteWithheld?.(r.problem, r.domain)) };
      const record = JSON.parse(r.record.toString('utf8')) as { domain: string };
      // A never-audited answer is verified with its absence proof, of the same build's map, through the one online
      // client; the batch's answer is its first read, a retry reads again.
      const verified = await verifyLookedUp(
        record.domain,
        { lookup: answeredFirst(r.record, lookup), ...options, trust: trustSourcesOf(options) },
        settings,
      );
      const { record: verifiedRecord, ...verification } = verified.structured;
      return {
        domain: r.domain,
        record: verifiedRecord as Record<string, unknown>,
        ...(verified.structured.absence !== null && verified.proof !== null ? { absence_proof: JSON.parse(verified.proof) } : {}),
        verification,
      };
    }),
  );
}

/** verify_merchants in its private form: each domain's verdict from its bucket's compact answer, fetched once for the batch. */
async function privateBatch(domains: string[], options: McpServerOptions, settings: PrivateSettings) {
  return (await verifyBatchPrivately(domains, { ...options, trust: trustSourcesOf(options) }, settings)).map((r) => {
    if ('problem' in r)
      return { domain: r.domain, problem: problemDocument(r.problem, options.issuer, options.noteWithheld?.(r.problem, r.domain)) };
    const { record, ...verification } = r.verified.structured;
    return { domain: r.domain, record: record as Record<string, unknown> | null, verification };
  });
}

/** A lookup whose first answer is one already read (the batch's), so that verifying it costs no second read; later ones look up again. */
function answeredFirst(bytes: Buffer, lookup: RecordLookup): RecordLookup {
  let first: Buffer | null = bytes;
  return (domain) => {
    const answer = first;
    first = null;
    return answer ? Promise.resolve(answer) : lookup(domain);
  };
}

/** merchant_history: the verdict on a domain in each kept build. */
function registerHistoryTool(server: McpServer, options: McpServerOptions): void {
  server.registerTool(
    HISTORY_TOOL_NAME,
    {
      title: 'Merchant history',
      description: [
        'The verdict on a merchant in each kept monthly build (about a year), newest first: status, tier, score and when it was last audited. Use it to see whether a shop was flagged or lost its tier recently, or what the verdict was on a given date. Get a signed record of a past build with GET /v1/verify?domain=&build=.',
        ...(options.remote
          ? [
              'It has no private form: this server sends the domain itself to the remote gateway (GET /v1/history), which learns it; use verify_merchant for a private lookup of the live build.',
            ]
          : []),
      ].join(' '),
      inputSchema: z.object({ domain: domainInputSchema.describe('The merchant domain or a URL on it.') }),
      outputSchema: historyAnswerSchema,
      annotations: { title: 'Merchant history', readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false },
    },
    async ({ domain }) => {
      try {
        const history = await options.history(normalizeDomain(domain));
        return { content: [{ type: 'text' as const, text: JSON.stringify(history) }], structuredContent: history };
      } catch (error) {
        return toolError(error, options.noteWithheld?.(error));
      }
    },
  );
}

/**
 * What a JSON-RPC message to the MCP endpoint costs against the key's quota: as over HTTP, one
 * unit a domain looked up, so `verify_merchants` costs one per domain it names (at most
 * {@link MAX_BATCH}: more is refused by its schema) and any other message one.
 */
export function quotaCost(message: unknown): number {
  if (Array.isArray(message)) return message.reduce((n: number, m) => n + quotaCost(m), 0) || 1;
  const call = message as { method?: unknown; params?: { name?: unknown; arguments?: { domains?: unknown } } } | null;
  const domains = call?.method === 'tools/call' && call.params?.name === BATCH_TOOL_NAME ? call.params.arguments?.domains : undefined;
  return Array.isArray(domains) && domains.length > 0 ? Math.min(domains.length, MAX_BATCH) : 1;
}

/**
 * Where this server's key set and log key come from: over its own records, the deployment's (what
 * its operator pinned); over a remote gateway (`mvr mcp --base-url`), that gateway's, on first use.
 */
function trustSourcesOf(options: McpServerOptions): TrustSources {
  return {
    keySet: options.keySetUrl,
    pinnedKeys: !options.remote,
    own: !options.remote,
    logKey: { fetched: options.keySetUrl.replace(KEY_SET_PATH, LOG_KEY_PATH), policy: 'the witness policy' },
  };
}

/** The key set URL of a gateway base URL. */
export function keySetUrlOf(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${KEY_SET_PATH}`;
}
