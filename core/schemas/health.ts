import { z } from 'zod';

/** `GET /healthz`: liveness (always 200 while the process serves), with the state of what it serves. */
export const healthSchema = z
  .strictObject({
    status: z.enum(['ok', 'degraded']).describe('ok when records and key set are loaded and no build is refused'),
    records: z.strictObject({
      ok: z.boolean(),
      build: z.string().nullable().describe('The live build'),
      error: z.string().nullable().describe('Why records are unavailable, in general words (the detail is logged, not served)'),
      failures: z
        .int()
        .min(0)
        .describe(
          'Stored records refused since start: missing though the map lists them, unreadable, too large, not regular files, corrupt or not verifying',
        ),
      refused: z
        .string()
        .nullable()
        .describe(
          'A build the store names live that is refused (its statement or domain map does not check; the detail is logged); the build served before, if any, stays served meanwhile',
        ),
    }),
    key_set: z.strictObject({ ok: z.boolean(), keys: z.int().min(0) }),
    cache: z
      .strictObject({ entries: z.int().min(0), bytes: z.int().min(0), limit: z.int().min(0) })
      .describe('Verified records held in memory'),
    api_keys: z.int().min(0).describe('Live (not revoked) API keys'),
  })
  .meta({ title: 'Health' });

export type Health = z.infer<typeof healthSchema>;
