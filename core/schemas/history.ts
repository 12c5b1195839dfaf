import { z } from 'zod';
import { BUILD_ID } from '../layout.ts';
import { recordSchema } from '../rules/record.ts';

// The wire formats of kept builds (`mvr build --keep`): the list of builds, a domain's history
// and the change feed between two builds. Their members are the record's own (status, tier,
// score, timestamps), taken from its schema so that the two cannot drift apart.

const { status, tier, score, issued_at, last_audited_at, domain } = recordSchema.shape;

/** A build's id, as `GET /v1/builds` lists it and `build=` / `since=` take it. */
export const buildIdSchema = z.string().regex(BUILD_ID).describe('A build id (GET /v1/builds)');

/** One kept build: its id, when it was issued, how many records it holds. */
export const keptBuildSchema = z.strictObject({ id: buildIdSchema, issued_at, records: z.int().min(0) }).meta({ title: 'Kept build' });

/** `GET /v1/builds`: the kept builds, newest first; the first is the live one. */
export const keptBuildsSchema = z.strictObject({ builds: z.array(keptBuildSchema) }).meta({ title: 'Kept builds' });

/** What a domain's record said in one kept build. */
export const historyEntrySchema = z
  .strictObject({ build: buildIdSchema, issued_at, status, tier, score, last_audited_at })
  .meta({ title: 'History entry' });

/** `GET /v1/history` and the MCP tool `merchant_history`: one entry per kept build with a record of the domain, newest first. */
export const historyAnswerSchema = z
  .strictObject({ domain: domain.describe('The normalized domain'), entries: z.array(historyEntrySchema) })
  .meta({ title: 'History', description: 'entries is empty for a domain no kept build has.' });

/** What the change feed compares between two builds: a record's status, tier and score. */
export const verdictSchema = z.strictObject({ status, tier, score }).meta({ title: 'Verdict' });

/** One line of a build's change feed: `before` null when newly audited, `after` null when dropped. */
export const changeEntrySchema = z
  .strictObject({ domain, before: verdictSchema.nullable(), after: verdictSchema.nullable() })
  .meta({ title: 'Change' });

/** `GET /v1/changes`: a page of at most 1000 changes from kept build `from` to the live build `to`. */
export const changesPageSchema = z
  .strictObject({
    from: buildIdSchema,
    to: buildIdSchema,
    changes: z.array(changeEntrySchema),
    next: z.string().nullable().describe('The cursor of the next page (`&cursor=`), or null on the last'),
  })
  .meta({ title: 'Changes' });

export type KeptBuildEntry = z.infer<typeof keptBuildSchema>;
export type KeptBuilds = z.infer<typeof keptBuildsSchema>;
export type HistoryEntry = z.infer<typeof historyEntrySchema>;
export type HistoryAnswer = z.infer<typeof historyAnswerSchema>;
export type Verdict = z.infer<typeof verdictSchema>;
export type ChangeEntry = z.infer<typeof changeEntrySchema>;
export type ChangesPage = z.infer<typeof changesPageSchema>;
