import { z } from 'zod';
import { BUNDLE_SCHEMA_SUFFIX, type Bundle } from '#shared';
import { recordSchema } from '../rules/record.ts';
import type { SameShape } from '../same-shape.ts';
import { absenceProofSchema, buildStatementSchema, mapLeafSchema } from './absence.ts';
import { logProofTextSchema } from './log.ts';

// The offline bundle's wire format (`GET /v1/bundle`, MCP's include_proof), beside the absence
// proof's: what the gateway answers, what `/schemas/bundle/v1` publishes and the OpenAPI document
// names. The portable verifier checks the same shape by hand (`verifyBundle`).

/** `GET /v1/bundle`: one document that proves a domain's answer offline. */
export const bundleSchema = z
  .strictObject({
    schema: z
      .url()
      .refine((u) => u.endsWith(BUNDLE_SCHEMA_SUFFIX), `ends in ${BUNDLE_SCHEMA_SUFFIX}`)
      .describe(`https://{issuer}${BUNDLE_SCHEMA_SUFFIX}`),
    domain: z.string().describe('The normalized domain'),
    record: recordSchema.describe('The signed record exactly as GET /v1/verify serves it, or the never-audited answer (status unverified)'),
    place: mapLeafSchema
      .nullable()
      .describe(
        "The record's leaf in the statement's domain map and its RFC 9162 inclusion path under domain_map.root; null for a never-audited answer",
      ),
    absence: absenceProofSchema
      .nullable()
      .describe(
        'For a never-audited answer, its absence proof exactly as GET /v1/absence answers it (same statement and statement_proof); null for a record',
      ),
    statement: buildStatementSchema,
    statement_proof: logProofTextSchema
      .nullable()
      .describe(
        "The statement's entry in the transparency log: a C2SP tlog-proof (no extra line) against the checkpoint served for the build, with its witnesses' cosignature lines; null when the gateway keeps no log",
      ),
  })
  .describe(
    "Holds when the record's signature verifies (or, never audited, the absence proof holds in the statement's map); place.leaf is the record's leaf, at place.index of the statement's domain map; the statement verifies against the key set; and, with the log's key or a witness policy, statement_proof proves the statement in the log under a checkpoint its quorum cosigned. Verify with `verifyBundle` of @merchant-verify/verifier, or `mvr verify DOMAIN --bundle FILE`.",
  )
  .meta({ title: 'Bundle' });

// The record is the verification record's own schema here; the verifier takes any object there and checks it by its signature.
true satisfies SameShape<Omit<z.infer<typeof bundleSchema>, 'record'>, Omit<Bundle, 'record'>>;
