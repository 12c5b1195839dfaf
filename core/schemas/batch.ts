import { z } from 'zod';
import { problemSchema } from '../errors/problem-document.ts';
import { recordSchema } from '../rules/record.ts';

// The wire formats of a batch lookup (`POST /v1/verify/batch`, the MCP tool `verify_merchants`).

/** The most domains one batch may hold. */
export const MAX_BATCH = 100;

/**
 * The body of `POST /v1/verify/batch`. Any string is taken as a domain: one that is not a valid
 * domain is INVALID_DOMAIN in its place in the answer, not a refused request.
 */
export const batchRequestSchema = z
  .strictObject({
    domains: z.array(z.string()).min(1).max(MAX_BATCH).describe(`1 to ${MAX_BATCH} domains or URLs, each in any form GET /v1/verify takes`),
  })
  .meta({ title: 'Batch request' });

const asSent = z.string().describe('The domain as sent');

/** A domain of the batch with a record: exactly what `GET /v1/verify` answers for it, so it verifies on its own. */
export const batchRecordResultSchema = z.strictObject({ domain: asSent, record: recordSchema }).meta({ title: 'Batch record' });

/** A domain of the batch without one: INVALID_DOMAIN (not a merchant domain) or UNAVAILABLE (try it again later). */
export const batchProblemResultSchema = z.strictObject({ domain: asSent, problem: problemSchema }).meta({ title: 'Batch problem' });

/** `POST /v1/verify/batch`: one result per domain sent, in order. */
export const batchAnswerSchema = z
  .strictObject({ results: z.array(z.union([batchRecordResultSchema, batchProblemResultSchema])) })
  .meta({ title: 'Batch answer' });

export type BatchRequest = z.infer<typeof batchRequestSchema>;
export type BatchAnswer = z.infer<typeof batchAnswerSchema>;
