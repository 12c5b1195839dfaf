/**
 * What a build may sign: no audit dated after the build's clock, no record over the byte limit
 * every store and reader holds to, and no build dated after the machine's clock. Run through the
 * real CLI: each case is refused with its exit code and one line naming file, line and member,
 * and the live build, the key set and the log stay as they were.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveNow } from '../../cli/config.ts';
import { FUTURE_TOLERANCE_MS } from '../../core/audit.ts';
import { MAX_RECORD_BYTES } from '../../core/files.ts';
import { audit, jsonl } from '../support/audits.ts';
import { buildArgs, runCli } from '../support/cli.ts';
import { snapshotOutputs } from '../support/outputs.ts';
import { liveRecordBytes } from '../support/packs.ts';
import { makeProject, NOW, NOW_ISO, removeTempDirs } from '../support/project.ts';

afterAll(removeTempDirs);

const MINUTE = 60_000;
const at = (ms: number) => new Date(ms).toISOString();

/** A built project with `files` added to its audits; the CLI build over it, and whether records/ and public/ stayed as they were. */
async function buildWith(
  files: Record<string, string>,
  extra: string[] = [],
  env: Record<string, string> = {},
  now: string | null = NOW_ISO,
) {
  const p = await makeProject();
  for (const [name, text] of Object.entries(files)) await writeFile(join(p.auditsDir, name), text);
  const before = await snapshotOutputs(p);
  const res = await runCli(buildArgs(p, extra, now), env);
  return { p, res, untouched: JSON.stringify(await snapshotOutputs(p)) === JSON.stringify(before) };
}

describe.concurrent('what a build may sign', () => {
  it('an audit dated after issued_at (beyond the tolerance) is a bad audit: one line naming file, line and member; nothing written', async () => {
    const { res, untouched } = await buildWith({
      'late.jsonl': jsonl(
        audit('in-tolerance.example', { last_audited_at: at(NOW + FUTURE_TOLERANCE_MS - MINUTE) }),
        audit('typo-year.example', { last_audited_at: '2031-10-15T12:00:00Z' }),
        audit('first-seen-ahead.example', {
          first_seen: at(NOW + FUTURE_TOLERANCE_MS + MINUTE),
          last_audited_at: at(NOW + FUTURE_TOLERANCE_MS + MINUTE),
        }),
      ),
    });
    expect(res.code, res.stderr).toBe(3);
    const problems = res.stderr.split('\n').filter((l) => l.includes('late.jsonl'));
    expect(problems).toEqual([
      expect.stringMatching(
        /late\.jsonl:2: last_audited_at: 2031-10-15T12:00:00Z is later than the build's issued_at 2026-11-01T00:00:00\.000Z/,
      ),
      expect.stringMatching(/late\.jsonl:3: first_seen: .* is later than the build's issued_at/),
      expect.stringMatching(/late\.jsonl:3: last_audited_at: .* is later than the build's issued_at/),
    ]);
    expect(untouched).toBe(true);
  });

  it(`an audit whose record would exceed ${MAX_RECORD_BYTES} bytes is refused, naming the audit and the size; nothing written`, async () => {
    const blockers = Array.from(
      { length: 2000 },
      (_, i) => `blocker number ${i} of a very long list of blockers, one hundred bytes each..`,
    );
    const { res, untouched } = await buildWith({
      'big.json': JSON.stringify([
        audit('fits.example'),
        audit('huge-evidence.example', { evidence: { ok: true, coverage: 1, site_coverage: 1, engines_ran: ['chatgpt'], blockers } }),
      ]),
    });
    expect(res.code, res.stderr).toBe(3);
    const problems = res.stderr.split('\n').filter((l) => l.includes('big.json'));
    expect(problems).toEqual([
      expect.stringMatching(
        new RegExp(`big\\.json\\[1\\]: its record would be \\d{6} bytes, more than the ${MAX_RECORD_BYTES} bytes a record may have`),
      ),
    ]);
    expect(untouched).toBe(true);
  });

  it('a record just under the limit is built, and its range of its pack is within the limit every store reads', async () => {
    const filler = 'x'.repeat(MAX_RECORD_BYTES - 2_000);
    const { p, res } = await buildWith({
      'near.json': JSON.stringify(
        audit('near-limit.example', {
          evidence: { ok: true, coverage: 1, site_coverage: 1, engines_ran: ['chatgpt'], blockers: [filler] },
        }),
      ),
    });
    expect(res.code, res.stderr).toBe(0);
    const size = (await liveRecordBytes(p, 'near-limit.example')).length;
    expect(size).toBeGreaterThan(MAX_RECORD_BYTES - 2_000);
    expect(size).toBeLessThanOrEqual(MAX_RECORD_BYTES);
  });

  it('--now or SOURCE_DATE_EPOCH later than the machine clock is a usage error (exit 2) naming it; nothing written', async () => {
    const now = await buildWith({}, [], {}, '2099-01-01T00:00:00Z');
    expect(now.res.code, now.res.stderr).toBe(2);
    expect(now.res.stderr).toMatch(/--now "2099-01-01T00:00:00Z": 2099-01-01T00:00:00\.000Z is later than this machine's clock/);
    expect(now.untouched).toBe(true);
    const sde = await buildWith({}, [], { SOURCE_DATE_EPOCH: '4102444800' }, null);
    expect(sde.res.code, sde.res.stderr).toBe(2);
    expect(sde.res.stderr).toMatch(/SOURCE_DATE_EPOCH "4102444800": 2100-01-01T00:00:00\.000Z is later than this machine's clock/);
    expect(sde.untouched).toBe(true);
  });

  it('the clock check holds the stated tolerance, against an injected clock', async () => {
    const clock = () => NOW;
    expect(await resolveNow(at(NOW + FUTURE_TOLERANCE_MS), {}, clock)).toBe(NOW + FUTURE_TOLERANCE_MS);
    await expect(resolveNow(at(NOW + FUTURE_TOLERANCE_MS + 1000), {}, clock)).rejects.toThrow(
      /--now .* is later than this machine's clock \(2026-11-01T00:00:00\.000Z\)/,
    );
    await expect(resolveNow(undefined, { SOURCE_DATE_EPOCH: String((NOW + FUTURE_TOLERANCE_MS) / 1000 + 1) }, clock)).rejects.toThrow(
      /SOURCE_DATE_EPOCH/,
    );
    expect(await resolveNow(undefined, {}, clock)).toBe(NOW);
  });
});
