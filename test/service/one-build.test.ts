/**
 * An answer made of several reads (a prefix answer's records beside its map, a bundle's pieces) is
 * all of one build: one made while another build went live is made again, over real builds swapped
 * in a real records folder.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordsService } from '../../service/records.ts';
import { openRecordsStack } from '../../service/records-stack.ts';
import { cleanup } from '../support/gateway.ts';
import { build, ISSUER, makeProject, NOW, type Project, removeTempDirs, SCHEMA_URL } from '../support/project.ts';

let p: Project;
let records: RecordsService;
beforeAll(async () => {
  p = await makeProject();
  records = (
    await openRecordsStack({
      store: { url: p.recordsDir, publicDir: p.publicDir },
      issuer: ISSUER,
      schemaUrl: SCHEMA_URL,
      cacheBytes: 1 << 20,
    })
  ).records;
});
afterAll(async () => {
  await cleanup();
  await removeTempDirs();
});

/** Builds the project again, a minute later each time, and has the records service take it. */
let minutes = 0;
async function swap(): Promise<void> {
  await build(p, { now: NOW + ++minutes * 60_000 });
  await records.refresh();
}

describe('RecordsService.ofOneBuild', () => {
  it('makes an answer again when a build goes live while it is made, and answers from the new build alone', async () => {
    const seen: string[] = [];
    const made = await records.ofOneBuild('a test answer', async (m) => {
      seen.push(m.build);
      if (seen.length === 1) await swap();
      return m.build;
    });
    expect(seen).toHaveLength(2);
    expect(seen[1]).not.toBe(seen[0]);
    expect(made).toBe(seen[1]);
    expect((await records.buildMap()).build).toBe(made);
  });

  it('is STORE_UNAVAILABLE, naming what was made, when builds keep going live', async () => {
    await expect(records.ofOneBuild('a test answer', async () => swap())).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
      message: expect.stringContaining('a test answer'),
    });
  });

  it('answers at once when the build stays live', async () => {
    let looks = 0;
    const made = await records.ofOneBuild('a test answer', async (m) => {
      looks++;
      return m.build;
    });
    expect(made).toBe((await records.buildMap()).build);
    expect(looks).toBe(1);
  });
});
