import { z } from 'zod';
import { buildStatementSchema } from './absence.ts';

// The statement a private client reads first, as the OpenAPI document describes it; the compact
// answers themselves are bytes (docs/private-lookups.md gives their layout).

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
