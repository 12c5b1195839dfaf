/**
 * How many worker threads a build starts by default: none up to a MiB of audits (a thread costs
 * more to start than such a build takes to sign: the audits are signed on the build's own thread),
 * then one per MiB, at most one per core plus one. `--workers` (or MVR_WORKERS) sets the number
 * outright. The same audits signed either way make the same build (test/build/reproducible.test.ts).
 */
import { availableParallelism } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultWorkers } from '../../builder/sign-audits.ts';
import { buildArgs, runCli } from '../support/cli.ts';
import { makeProject, removeTempDirs } from '../support/project.ts';

afterAll(removeTempDirs);

const MiB = 1024 * 1024;
const files = (...sizes: number[]) => sizes.map((size, i) => ({ path: `a${i}.jsonl`, size }));

describe('the default number of build workers', () => {
  it("is none up to a MiB of audits (the build's thread), then one per MiB, at most one per core plus one", () => {
    const most = availableParallelism() + 1;
    expect(defaultWorkers([])).toBe(0);
    expect(defaultWorkers(files(10_000))).toBe(0);
    expect(defaultWorkers(files(MiB))).toBe(0);
    expect(defaultWorkers(files(MiB + 1))).toBe(Math.min(2, most));
    expect(defaultWorkers(files(MiB / 2, MiB / 2, 1))).toBe(Math.min(2, most));
    expect(defaultWorkers(files(1000 * MiB))).toBe(most);
  });

  it("mvr build of the sample audits signs on the build's thread; --workers sets the number outright", async () => {
    const p = await makeProject({ sign: true, build: false });
    const byDefault = await runCli([...buildArgs(p), '--json'], { MVR_WORKERS: undefined });
    expect(byDefault.code, byDefault.stderr).toBe(0);
    expect(JSON.parse(byDefault.stdout)).toMatchObject({ workers: 0 });
    const text = await runCli(buildArgs(await makeProject({ sign: true, build: false })), { MVR_WORKERS: undefined });
    expect(text.stdout).toMatch(/ records\/s, signed on the build's thread, peak RSS /);

    const q = await makeProject({ sign: true, build: false });
    const asked = await runCli(buildArgs(q, ['--workers', '2']), { MVR_WORKERS: undefined });
    expect(asked.code, asked.stderr).toBe(0);
    expect(asked.stdout).toMatch(/ records\/s, 2 workers, peak RSS /);
  });
});
