import { z } from 'zod';
import { type AbsenceProof, type BuildStatement, STATEMENT_SCHEMA_SUFFIX, statementLeafSize, TLOG_PROOF_HEADER } from '#shared';
import type { SameShape } from '../same-shape.ts';

// The wire formats of absence, as zod schemas beside the record's: what the gateway answers and
// what the OpenAPI document describes. The portable verifier checks the same shape by hand
// (`createAbsenceVerifier`), having no schema library; its types and these schemas must agree, or
// the two lines at the end do not compile.

const hash = z
  .string()
  .regex(/^[A-Za-z0-9+/]{43}=$/)
  .describe('A 32-byte SHA-256 hash in standard base64 (RFC 4648 section 4, padded)');

/** A leaf of a domain map: a v1 map's domain hash (32 bytes), or a v2 map's entry (82 bytes, 112 base64 characters). */
export const mapLeaf = z
  .string()
  .regex(/^(?:[A-Za-z0-9+/]{43}=|[A-Za-z0-9+/]{110}==)$/)
  .describe(
    "A leaf of the domain map in standard base64: for a statement of schema .../build/v2, the domain's 82-byte entry (domain_hash 32, record_hash 32 = SHA-256 of the record's canonical JSON, status 1, tier 1, score binary64, next_audit_at int64 ms, big-endian); for .../build/v1, the 32-byte domain hash",
  );

/** What a build says about itself, signed with the record key by the record scheme. */
export const buildStatementSchema = z
  .looseObject({
    schema: z
      .url()
      .refine(
        (u) => statementLeafSize(u) !== null,
        `ends in ${STATEMENT_SCHEMA_SUFFIX} (or /schemas/build/v1, a build made before map entries)`,
      ),
    issuer: z.string(),
    build: z.string(),
    issued_at: z.iso.datetime(),
    records: z.int().min(0),
    domain_map: z.object({ size: z.int().min(0), root: hash }),
    lookup: z
      .object({
        prefix_length: z.int().min(1).describe('Hex digits of every prefix of GET /v1/lookup/{prefix} for this build'),
        answer_bytes: z.int().min(0).describe('UTF-8 bytes of the padded part of every prefix answer of this build'),
        bits: z
          .int()
          .min(1)
          .max(32)
          .optional()
          .describe('Bits of every bucket of GET /v1/lookup/{bits}/{hex} for this build; absent from builds made before compact answers'),
        bucket_bytes: z.int().min(0).optional().describe('Bytes of every compact answer (GET /v1/lookup/{bits}/{hex}) of this build'),
      })
      .optional()
      .describe('Prefix lookups of this build; absent from builds made before them'),
    ohttp: z
      .object({
        key_config_sha256: z
          .string()
          .regex(/^[0-9a-f]{64}$/)
          .describe("SHA-256 (hex) of the gateway's key configuration as /.well-known/ohttp-gateway serves it (application/ohttp-keys)"),
      })
      .optional()
      .describe('The Oblivious HTTP key configuration of this build; absent from builds made without one'),
    key_id: z.string().optional(),
    signature: z
      .string()
      .regex(/^ed25519:[A-Za-z0-9_-]{86}$/)
      .optional(),
  })
  .describe(
    'What a build says about itself, signed with the record key by the record scheme (RFC 8785 without key_id and signature, Ed25519). More members may be added; every member is signed.',
  );

/** A leaf of a build's domain map at its index, with its inclusion path: an absence proof's neighbour, a bundle's place. */
export const mapLeafSchema = z.object({
  index: z.int().min(0).describe("The leaf's index in the sorted map"),
  leaf: mapLeaf,
  path: z.array(hash).describe('RFC 9162 inclusion proof of the leaf at its index, from the leaf up'),
});

const neighbour = mapLeafSchema.nullable();

/** `GET /v1/absence`: why a domain has no record in a build. */
export const absenceProofSchema = z
  .strictObject({
    domain: z.string().describe('The normalized domain'),
    domain_hash: hash,
    statement: buildStatementSchema,
    left: neighbour,
    right: neighbour,
    statement_proof: z
      .string()
      .startsWith(`${TLOG_PROOF_HEADER}\n`)
      .optional()
      .describe(
        "The build statement's entry in the transparency log: a C2SP tlog-proof (no extra line) of SHA-256(\"merchant-verify build statement v1\\n\" || the statement file's bytes, which are the RFC 8785 canonical JSON of statement and a newline) against the checkpoint the build signed, the one its records' log proofs are against. Absent for a build made before statements were logged or without a log key, and from a gateway that reads an https:// origin.",
      ),
  })
  .describe(
    "Holds when the statement verifies against the key set; domain_hash is SHA-256 of the domain; left.leaf < domain_hash < right.leaf (a leaf compared by its first 32 bytes, its domain hash); each path proves its leaf at its index under domain_map.root and size; and right.index = left.index + 1 (no left: right.index 0; no right: left.index = size - 1; neither: size 0). With the log's verifier key, statement_proof must also prove the statement in the log. Verify with `verifyAbsence` of @merchant-verify/verifier.",
  );

true satisfies SameShape<z.infer<typeof absenceProofSchema>, AbsenceProof>;
true satisfies SameShape<z.infer<typeof buildStatementSchema>, BuildStatement>;
