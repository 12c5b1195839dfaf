import type { VerifierErrorCode } from '@merchant-verify/verifier';

/**
 * Every error code of merchant-verify, in one registry: the service's and CLI's own (raised by the
 * classes in errors.ts) and the verifier package's (its verdicts and misuse errors). The package
 * lists its codes; the check below the table fails to compile when one of them is missing here.
 *
 * An entry gives the code's HTTP status (null for codes the HTTP API never answers with), the
 * title of its problem document, and the exit code of the CLI. A server failure (5xx) also gives
 * the `detail` its answers carry in place of the error's message, which may say where (a path, a
 * bucket, an object key, a URL, a system error): that goes to the request's log line instead. Problem documents, the OpenAPI
 * enum, MCP `isError` results and CLI exits are all derived from this table at the edges;
 * nothing else maps a code to a number. Tests assert `code`, never the wording.
 */
export const ERROR_REGISTRY = {
  // Answered over HTTP (and MCP): a problem document with this status.
  INVALID_DOMAIN: { status: 400, title: 'Invalid domain', exit: 3 },
  INVALID_PREFIX: { status: 400, title: 'Invalid prefix', exit: 3 },
  // A compact lookup (`/v1/lookup/{bits}/{hex}`) with another number of bits than the live build's statement signs.
  PREFIX_LENGTH_MISMATCH: { status: 400, title: "Prefix length is not the build's", exit: 3 },
  INVALID_REQUEST: { status: 400, title: 'Invalid request', exit: 1 },
  UNAUTHORIZED: { status: 401, title: 'Unauthorized', exit: 1 },
  FORBIDDEN: { status: 403, title: 'Forbidden', exit: 1 },
  NOT_FOUND: { status: 404, title: 'Not found', exit: 1 },
  BUILD_NOT_FOUND: { status: 404, title: 'Build not found', exit: 1 },
  NOT_IN_LOG: { status: 404, title: 'Not in the log', exit: 13 },
  HAS_RECORD: { status: 404, title: 'Domain has a record', exit: 1 },
  METHOD_NOT_ALLOWED: { status: 405, title: 'Method not allowed', exit: 1 },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'Payload too large', exit: 1 },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported media type', exit: 1 },
  // Oblivious HTTP: a request for a key configuration this gateway does not hold (RFC 9458 section 5.3), one that
  // does not open, and (inside an encapsulated response) an inner request for a route not offered through it.
  OHTTP_KEY_UNKNOWN: { status: 422, title: 'Unknown Oblivious HTTP key configuration', exit: 25 },
  OHTTP_DECAPSULATION_FAILED: { status: 400, title: 'Encapsulated request cannot be opened', exit: 25 },
  OHTTP_ROUTE_REFUSED: { status: 403, title: 'Route not offered through Oblivious HTTP', exit: 25 },
  RANGE_NOT_SATISFIABLE: { status: 416, title: 'Range not satisfiable', exit: 1 },
  RATE_LIMITED: { status: 429, title: 'Too many requests', exit: 1 },
  TOO_MANY_STREAMS: { status: 429, title: 'Too many streams', exit: 1 },
  INTERNAL: { status: 500, title: 'Internal error', exit: 1, detail: 'an unexpected error occurred' },
  STORE_UNAVAILABLE: {
    status: 503,
    title: 'Verification records unavailable',
    exit: 1,
    detail: 'a store this answer needs (the records, or the API keys) cannot be read now; try again later',
  },
  UNAVAILABLE: {
    status: 503,
    title: 'Record temporarily unavailable',
    exit: 1,
    detail: 'the record cannot be served now (unreadable, corrupt, or its signature does not verify); try again later',
  },
  // Raised by the build and the CLI only.
  // A change whose writer lost its lock meanwhile, refused by the state's generation (core/generation.ts).
  LOCK_LOST: { status: null, title: 'Lock lost', exit: 1 },
  INVALID_USAGE: { status: null, title: 'Invalid usage', exit: 2 },
  INVALID_CONFIG: { status: null, title: 'Invalid configuration', exit: 2 },
  INVALID_KEY: { status: null, title: 'Invalid key', exit: 2 },
  INVALID_KEY_SET: { status: null, title: 'Invalid key set', exit: 3 },
  INVALID_AUDITS: { status: null, title: 'Invalid audits', exit: 3 },
  NOT_CANONICALIZABLE: { status: null, title: 'Not canonicalizable', exit: 3 },
  INVALID_CHECKPOINT: { status: null, title: 'Invalid checkpoint', exit: 3 },
  // Misuse of the verifier package (thrown): an option or argument it cannot take, a log's verifier key that cannot be
  // read (a flag's value, as a policy is), a signed note, checkpoint or tlog-proof that cannot be read (data, as a checkpoint is).
  INVALID_ARGUMENT: { status: null, title: 'Invalid argument', exit: 2 },
  INVALID_VERIFIER_KEY: { status: null, title: 'Invalid verifier key', exit: 2 },
  MALFORMED_NOTE: { status: null, title: 'Malformed signed note', exit: 3 },
  BUILD_FAILED: { status: null, title: 'Build failed', exit: 1 },
  // Ctrl-C (SIGINT) or SIGTERM stopped a build before it went live: the shell's 128 + SIGINT.
  INTERRUPTED: { status: null, title: 'Interrupted', exit: 130 },
  SELF_CHECK_FAILED: { status: null, title: 'Signature self-check failed', exit: 1 },
  FETCH_FAILED: { status: null, title: 'Fetch failed', exit: 12 },
  // A gateway's Oblivious HTTP key configuration that cannot be used: malformed, another suite, or not the one its build signed.
  OHTTP_KEY_CONFIG_INVALID: { status: null, title: 'Oblivious HTTP key configuration refused', exit: 25 },
  LOG_INCONSISTENT: { status: null, title: 'Log not an append-only extension', exit: 14 },
  // Verdicts of a record's verification (`verifyRecord`, `mvr verify`): results, never thrown.
  UNSIGNED: { status: null, title: 'Record unsigned', exit: 10 },
  MALFORMED_RECORD: { status: null, title: 'Malformed record', exit: 11 },
  UNKNOWN_KEY: { status: null, title: 'Unknown key', exit: 11 },
  // Signed by a key the key set lists, but that the verifier's pinned keys (--trusted-keys) neither are nor endorsed.
  KEY_NOT_TRUSTED: { status: null, title: 'Key not trusted', exit: 22 },
  MALFORMED_SIGNATURE: { status: null, title: 'Malformed signature', exit: 11 },
  BAD_SIGNATURE: { status: null, title: 'Bad signature', exit: 11 },
  DOMAIN_MISMATCH: { status: null, title: 'Record of another domain', exit: 11 },
  // Verdicts of a log proof's verification (`verifyLogProof`, `mvr verify --log`).
  MALFORMED_PROOF: { status: null, title: 'Malformed log proof', exit: 13 },
  CHECKPOINT_NOT_SIGNED: { status: null, title: 'Checkpoint not signed by the log', exit: 13 },
  LOG_ORIGIN_MISMATCH: { status: null, title: 'Checkpoint of another log', exit: 13 },
  NOT_INCLUDED: { status: null, title: 'Record not included in the log', exit: 13 },
  // A witness policy implies the log check: no log key given, and no log line of the policy for the proof's origin.
  LOG_KEY_MISSING: { status: null, title: 'No log key to check the proof with', exit: 13 },
  // Verdicts of an absence proof's verification (`verifyAbsence`, `mvr verify` of a never-audited domain).
  // A proven absence is its own exit code, never 0: "never audited" is not "verified".
  NEVER_AUDITED: { status: null, title: 'Never audited (absence proven)', exit: 15 },
  MALFORMED_ABSENCE_PROOF: { status: null, title: 'Malformed absence proof', exit: 16 },
  STATEMENT_NOT_SIGNED: { status: null, title: 'Build statement not signed', exit: 16 },
  NOT_ABSENT: { status: null, title: 'Absence not proven', exit: 16 },
  // With the log's key (`mvr verify --log`): the absence proof's build statement is not proven in the log, as NOT_INCLUDED is for a record.
  STATEMENT_NOT_LOGGED: { status: null, title: 'Build statement not proven in the log', exit: 13 },
  // The build statement's checkpoint holds entries logged after it: the answer is of a build a later one superseded.
  BUILD_SUPERSEDED: { status: null, title: 'Build superseded by a later one in the log', exit: 23 },
  // Verdicts of a compact answer (`verifyCompactAnswer`, `mvr verify --private`): the answer is not the complete,
  // padded set of the prefix the domain asked, so neither a record nor an absence is taken from it.
  MALFORMED_PREFIX_ANSWER: { status: null, title: 'Malformed prefix answer', exit: 16 },
  PREFIX_MISMATCH: { status: null, title: 'Answer for another prefix', exit: 16 },
  PADDING_MISMATCH: { status: null, title: 'Prefix answer not padded to its build size', exit: 16 },
  INCOMPLETE_PREFIX_ANSWER: { status: null, title: 'Prefix answer not complete', exit: 16 },
  PREFIX_TOO_LONG: { status: null, title: 'Prefix longer than the build size allows', exit: 16 },
  // An offline bundle (`verifyBundle`, `mvr verify --bundle`) that is not one. A v2 build's map commits to every record
  // (its entry's record_hash): a record of an answer that is not its entry's (an older record of the same domain, any
  // other bytes) is refused, whichever record of a prefix answer's run it is, or a bundle's.
  MALFORMED_BUNDLE: { status: null, title: 'Malformed bundle', exit: 16 },
  RECORD_NOT_IN_MAP: { status: null, title: "A record that is not what its build's map committed", exit: 16 },
  // Online, a record checked with the log is tied to its build by the bundle: the bundle's record, read twice, was not the answer.
  BUNDLE_MISMATCH: { status: null, title: "Bundle's record is not the answer verified", exit: 16 },
  // Witnesses (c2sp.org/tlog-witness, tlog-cosignature, tlog-policy): a policy file, a checkpoint's cosignatures, a witness's answer.
  INVALID_POLICY: { status: null, title: 'Invalid witness policy', exit: 2 },
  BAD_COSIGNATURE: { status: null, title: 'Cosignature does not verify', exit: 17 },
  NOT_WITNESSED: { status: null, title: 'Checkpoint not witnessed by the quorum', exit: 17 },
  WITNESS_REFUSED: { status: null, title: 'Witness refused the checkpoint', exit: 18 },
  WITNESS_UNAVAILABLE: { status: null, title: 'Witness unavailable', exit: 18 },
  // A build or publish whose checkpoint too few witnesses cosigned: it does not go live.
  WITNESS_QUORUM_NOT_MET: { status: null, title: 'Witness quorum not met', exit: 19 },
  // A refresh (or publish) whose served checkpoint got too few fresh cosignatures: the earlier ones still
  // stand, but they age, so a scheduled job fails and alerts before every max-age verifier refuses.
  NOT_FRESHLY_WITNESSED: { status: null, title: 'Served checkpoint not freshly cosigned by the quorum', exit: 20 },
  // `mvr mirror`: a check of the build fetched failed (its statement, a pack, a record, the log); the mirror's previous build stays live.
  MIRROR_REFUSED: { status: null, title: 'Mirror refused the build', exit: 21 },
} as const satisfies Record<string, { status: number | null; title: string; exit: number; detail?: string }>;

export type ErrorCode = keyof typeof ERROR_REGISTRY;

/** Compile-time check: every code of the verifier package has an entry above. */
const EVERY_VERIFIER_CODE_IS_REGISTERED: Record<VerifierErrorCode, unknown> = ERROR_REGISTRY;
void EVERY_VERIFIER_CODE_IS_REGISTERED;

/** The codes the HTTP API answers with (a status in the registry), in registry order. */
export const HTTP_ERROR_CODES = (Object.keys(ERROR_REGISTRY) as ErrorCode[]).filter((code) => ERROR_REGISTRY[code].status !== null);

/** Whether a code (from a problem document, say) is one of the registry's. */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.hasOwn(ERROR_REGISTRY, code);
}

/** The CLI's exit code for an error code; 1 for anything unknown. */
export function exitCodeOf(code: string): number {
  return isErrorCode(code) ? ERROR_REGISTRY[code].exit : 1;
}
