import { z } from 'zod';
import { buildStatementSchema, mapLeaf } from './absence.ts';

// The wire format of a prefix lookup, beside the absence proof's: what the gateway answers and what
// the OpenAPI document describes. The portable verifier (`verifyPrefixAnswer`) checks the same shape by hand.

const hash = z
  .string()
  .regex(/^[A-Za-z0-9+/]{43}=$/)
  .describe('A 32-byte SHA-256 hash in standard base64 (RFC 4648 section 4, padded)');

/** `GET /v1/lookup`: the live build's statement, which a compact answer (`GET /v1/lookup/{bits}/{hex}`) binds to by its map root. */
export const lookupStatementSchema = z
  .strictObject({
    statement: buildStatementSchema,
    statement_proof: z
      .string()
      .optional()
      .describe("The build statement's entry in the transparency log, as an absence proof carries it; absent where the store keeps no log"),
  })
  .describe('Check it first (verifyCompactAnswer does): its lookup.bits is the only length a client sends.');

/** `GET /v1/lookup/{prefix}`: every record of the live build whose domain hash starts with the prefix, and why they are all. */
export const prefixAnswerSchema = z
  .strictObject({
    statement: buildStatementSchema,
    prefix: z
      .string()
      .regex(/^[0-9a-f]+$/)
      .describe('The prefix asked: statement.lookup.prefix_length lowercase hex digits'),
    first: z.int().min(0).describe('The map index of the first of `leaves`'),
    leaves: z
      .array(mapLeaf)
      .describe(
        "The map's leaves with the prefix, in order, with the leaf just below them and the leaf just above them where the map has one",
      ),
    records: z.array(z.looseObject({ domain: z.string() })).describe('The signed record of each leaf with the prefix, in the same order'),
    proof: z
      .array(hash)
      .describe(
        "The hashes of the map's subtrees outside `leaves`, depth first and left to right: with the leaves they hash to domain_map.root",
      ),
    padding: z
      .string()
      .describe(
        'Spaces: the JSON text of {prefix, first, leaves, records, proof, padding} is statement.lookup.answer_bytes bytes in every answer of the build',
      ),
    statement_proof: z
      .string()
      .optional()
      .describe("The build statement's entry in the transparency log, as an absence proof carries it; absent where the store keeps no log"),
  })
  .describe(
    "Holds when the statement verifies against the key set; prefix is the asker's; the padded part is answer_bytes long; leaves and proof hash to domain_map.root at index first; the leaves with the prefix are all between the two neighbours; and each record is the domain of its leaf; in a v2 build, every record hashes (its canonical JSON) to its entry's record_hash and carries its status, tier, score and next audit. Verify with `verifyPrefixAnswer` of @merchant-verify/verifier.",
  );
