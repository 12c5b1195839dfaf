import { z } from 'zod';
import { canonicalJson } from '#shared';
import { BuildError } from '../errors/errors.ts';
import { recordSchema } from '../rules/record.ts';

// A build's `manifest.json`: what the build is (issuer, time, schema), what it holds (counts by
// status and tier) and what verifies it (its signing key, the keys published beside it, its
// entries in the log). `mvr build` writes it; the kept-builds list, `mvr publish` and the tests
// read it. All of them go through this schema, so a member cannot change in one place only.

const { issued_at, schema } = recordSchema.shape;
const count = z.int().min(0);

export const manifestSchema = z
  .strictObject({
    issuer: z.string().min(1),
    issued_at,
    schema,
    records: count,
    by_status: z.record(z.string(), count),
    by_tier: z.record(z.string(), count),
    key_id: z.string().min(1).nullable().describe('The key that signed the records; null for an unsigned build'),
    key_ids_published: z.array(z.string().min(1)),
    log: z
      .strictObject({
        origin: z.string().min(1),
        from: count,
        to: count,
        statement: count
          .optional()
          .describe("The build statement's entry, the last (to - 1); absent in builds made before statements were logged"),
      })
      .nullable()
      .describe(
        "The build's entries are [from, to) of the log named origin: its records in domain order, then its statement; null when not logged",
      ),
  })
  .meta({ title: 'Build manifest' });

export type Manifest = z.infer<typeof manifestSchema>;

/** The file's text: canonical JSON and a newline, checked against the schema first. */
export function manifestText(manifest: Manifest): string {
  return `${canonicalJson(manifestSchema.parse(manifest))}\n`;
}

/** A manifest read back; `where` names the file in the error (a BuildError) when it is not one. */
export function parseManifest(bytes: Buffer | string, where: string): Manifest {
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString());
  } catch (error) {
    throw new BuildError(`${where} is not JSON: ${(error as Error).message}`);
  }
  const parsed = manifestSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new BuildError(`${where} is not a build manifest: ${issue.path.join('.') || '(top)'}: ${issue.message}`);
  }
  return parsed.data;
}
