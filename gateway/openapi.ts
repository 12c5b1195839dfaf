import { BUNDLE_SCHEMA_SUFFIX } from '@merchant-verify/verifier';
import { z } from 'zod';
import { problemSchema } from '../core/errors/problem-document.ts';
import { domainInputSchema } from '../core/rules/domain-input.ts';
import { recordSchema } from '../core/rules/record.ts';
import { absenceProofSchema, buildStatementSchema } from '../core/schemas/absence.ts';
import { batchAnswerSchema, batchProblemResultSchema, batchRecordResultSchema, batchRequestSchema } from '../core/schemas/batch.ts';
import { bundleSchema } from '../core/schemas/bundle.ts';
import { healthSchema } from '../core/schemas/health.ts';
import {
  changeEntrySchema,
  changesPageSchema,
  historyAnswerSchema,
  historyEntrySchema,
  keptBuildSchema,
  keptBuildsSchema,
  verdictSchema,
} from '../core/schemas/history.ts';
import { keySetSchema } from '../core/schemas/key-set.ts';
import { checkpointTextSchema, logProofTextSchema, logVerifierKeySchema } from '../core/schemas/log.ts';
import { lookupStatementSchema } from '../core/schemas/lookup.ts';
import { logPaths } from './openapi-log.ts';
import { mirrorPaths } from './openapi-mirror.ts';
import { ohttpPaths } from './openapi-ohttp.ts';
import { publicPaths } from './openapi-public.ts';
import { recordPaths } from './openapi-records.ts';

/** Every wire format the document names, by its component name. */
const COMPONENTS: Record<string, z.ZodType> = {
  VerificationRecord: recordSchema,
  Problem: problemSchema,
  KeySet: keySetSchema,
  Health: healthSchema,
  DomainParameter: domainInputSchema,
  BatchRequest: batchRequestSchema,
  BatchAnswer: batchAnswerSchema,
  BatchRecord: batchRecordResultSchema,
  BatchProblem: batchProblemResultSchema,
  BuildStatement: buildStatementSchema,
  AbsenceProof: absenceProofSchema,
  Bundle: bundleSchema,
  LookupStatement: lookupStatementSchema,
  KeptBuild: keptBuildSchema,
  KeptBuilds: keptBuildsSchema,
  HistoryEntry: historyEntrySchema,
  History: historyAnswerSchema,
  Verdict: verdictSchema,
  Change: changeEntrySchema,
  Changes: changesPageSchema,
  LogProof: logProofTextSchema,
  Checkpoint: checkpointTextSchema,
  LogVerifierKey: logVerifierKeySchema,
};

/** The record's JSON Schema (2020-12), with its `$id`: what `/schemas/verification/v1` serves. */
export function recordJsonSchema(schemaUrl: string): Record<string, unknown> {
  return { $id: schemaUrl, ...z.toJSONSchema(recordSchema, { target: 'draft-2020-12' }) };
}

/** The offline bundle's JSON Schema (2020-12), with its `$id`: what `/schemas/bundle/v1` serves. */
export function bundleJsonSchema(issuer: string): Record<string, unknown> {
  return { $id: `https://${issuer}${BUNDLE_SCHEMA_SUFFIX}`, ...z.toJSONSchema(bundleSchema, { target: 'draft-2020-12' }) };
}

/** The components, generated from the zod schemas; references between them by `$ref`. */
function components(): Record<string, unknown> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(COMPONENTS)) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, { uri: (id) => `#/components/schemas/${id}` });
  // Inside an OpenAPI document a component is named by its key, not by `$id` or `$schema`.
  return Object.fromEntries(Object.entries(schemas).map(([id, { $id: _id, $schema: _schema, ...schema }]) => [id, schema]));
}

/** OpenAPI 3.1 description of the gateway's HTTP API, served at `/openapi.json`. */
export function openApiDocument(options: { issuer: string; schemaUrl: string }): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'merchant-verify',
      version: '1.0.0',
      description:
        'Signed verification records for merchant domains. Records are Ed25519-signed over RFC 8785 canonical JSON; verify them with the public key set. Every answer carries `X-Content-Type-Options: nosniff`; every GET is answered to HEAD too, with the same status and headers and no body; a request with more than one `Host` or `Authorization` header is refused with 400 INVALID_REQUEST before any route sees it.',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: `https://${options.issuer}` }],
    security: [{ apiKey: [] }],
    tags: [
      { name: 'records', description: 'Key-gated verification records' },
      { name: 'public', description: 'Open to anyone; a CDN may serve these' },
    ],
    components: {
      securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'An API key from `mvr apikey create`.' } },
      schemas: components(),
    },
    paths: {
      ...recordPaths(),
      ...logPaths(),
      ...mirrorPaths(),
      ...publicPaths(options.schemaUrl),
      ...ohttpPaths(),
    },
  };
}
