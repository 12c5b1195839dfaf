/**
 * `mvr verify --bundle-out` keeps a witnessed build's bundle fetched from a real gateway, and
 * `mvr verify --bundle` checks it with the gateway stopped: nothing is fetched. As of a time
 * (`--at`) within the maximum age of its cosignatures it holds; later, or before they were made,
 * the witnesses do not vouch for it (NOT_WITNESSED). A never-audited bundle is NEVER_AUDITED, a
 * forged one refused with its code; exit codes are the registry's.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exitCodeOf } from '../../core/errors/errors.ts';
import { runCli } from '../support/cli.ts';
import { type BuildWitness, buildPolicy, cosignBuild, startBuildWitnesses } from '../support/cosign-build.ts';
import { cleanup, type TestGateway } from '../support/gateway.ts';
import { gatewayOver, loggedProject, NOV, vkeyFile } from '../support/logged-project.ts';
import { build, GOLD, type Project, removeTempDirs, tempDir, UNAUDITED } from '../support/project.ts';
import { parseJson } from '../support/verify-cli.ts';

const HOUR = 3_600_000;
const T0 = NOV + HOUR;
const iso = (ms: number) => new Date(ms).toISOString();
let p: Project;
let g: TestGateway;
let witnesses: BuildWitness[];
let dir: string;
let policyFile: string;
let goldFile: string;
let neverFile: string;

beforeAll(async () => {
  p = await loggedProject();
  await build(p, { now: NOV });
  witnesses = await startBuildWitnesses(p, ['a', 'b', 'c'], T0);
  const policy = await buildPolicy(p, witnesses, 'group two 2 a b c\nquorum two');
  await cosignBuild(p, policy);
  g = await gatewayOver(p);
  dir = await tempDir();
  policyFile = join(dir, 'witnesses.policy');
  await writeFile(policyFile, policy);
  [goldFile, neverFile] = [join(dir, 'gold.bundle.json'), join(dir, 'never.bundle.json')];
});
afterAll(async () => {
  for (const w of witnesses) await w.close();
  await cleanup();
  await removeTempDirs();
});

/** `mvr verify ... --bundle FILE --json` offline, with the project's key set, log key and policy. */
const offline = (file: string, extra: string[]) =>
  runCli(['verify', '--bundle', file, '--key-set', p.keySetFile, '--log-key', vkeyFile(p), '--policy', policyFile, '--json', ...extra]);

describe('mvr verify --bundle-out, then --bundle with the gateway stopped', () => {
  it('keeps the bundle the gateway gives, verified on the way', async () => {
    const online = ['--base-url', g.url, '--api-key', g.key, '--log', '--policy', policyFile, '--json'];
    const gold = await runCli(['verify', GOLD, '--bundle-out', goldFile, ...online]);
    expect(gold.code, gold.stderr).toBe(0);
    expect(parseJson(gold.stdout)).toMatchObject({ valid: true, domain: GOLD, place: { valid: true }, statement: { valid: true } });
    const never = await runCli(['verify', UNAUDITED, '--bundle-out', neverFile, ...online]);
    expect(never.code, never.stderr).toBe(exitCodeOf('NEVER_AUDITED'));
    expect(JSON.parse(await readFile(neverFile, 'utf8'))).toMatchObject({ domain: UNAUDITED, place: null });
    await g.close();
  });

  it('verifies it offline as of a time within the maximum age; after it, or before the cosignatures, NOT_WITNESSED', async () => {
    const within = await offline(goldFile, [GOLD, '--max-age', '2h', '--at', iso(T0 + HOUR)]);
    expect(within.code, within.stderr).toBe(0);
    expect(parseJson(within.stdout)).toMatchObject({
      valid: true,
      code: null,
      domain: GOLD,
      signature: { valid: true },
      place: { valid: true },
      statement: { valid: true, log: { valid: true } },
      witnesses: { valid: true },
    });
    const late = await offline(goldFile, ['--max-age', '2h', '--at', iso(T0 + 3 * HOUR)]);
    expect(late.code).toBe(exitCodeOf('NOT_WITNESSED'));
    expect(parseJson(late.stdout)).toMatchObject({ valid: false, code: 'NOT_WITNESSED' });
    // Before the build was issued, no cosignature of it had been made.
    const early = await offline(goldFile, ['--at', iso(NOV - 24 * HOUR)]);
    expect(parseJson(early.stdout)).toMatchObject({ valid: false, code: 'NOT_WITNESSED' });
    const text = await runCli(['verify', GOLD, '--bundle', goldFile, '--key-set', p.keySetFile, '--log-key', vkeyFile(p)]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^VALID: acme-outdoor\.example\n/);
    expect(text.stdout).toMatch(/\n {2}place {6}leaf \d+ of the build's domain map\n/);
  });

  it('a never-audited bundle is NEVER_AUDITED; a forged or misused one is refused with its code', async () => {
    const never = await offline(neverFile, [UNAUDITED, '--at', iso(T0 + HOUR)]);
    expect(never.code).toBe(exitCodeOf('NEVER_AUDITED'));
    expect(parseJson(never.stdout)).toMatchObject({ valid: false, code: 'NEVER_AUDITED', absence: { valid: true } });
    // GOLD's bundle asked as another domain's.
    const other = await offline(goldFile, [UNAUDITED, '--at', iso(T0 + HOUR)]);
    expect(parseJson(other.stdout)).toMatchObject({ valid: false, code: 'DOMAIN_MISMATCH' });
    const bundle = JSON.parse(await readFile(goldFile, 'utf8'));
    bundle.place.index += 1;
    const forged = join(dir, 'forged.bundle.json');
    await writeFile(forged, JSON.stringify(bundle));
    const moved = await offline(forged, ['--at', iso(T0 + HOUR)]);
    expect(moved.code).toBe(exitCodeOf('RECORD_NOT_IN_MAP'));
    expect(parseJson(moved.stdout)).toMatchObject({ valid: false, code: 'RECORD_NOT_IN_MAP', place: { valid: false } });
    expect((await offline(goldFile, ['--at', 'yesterday'])).code).toBe(2);
    expect((await offline(goldFile, ['--file', goldFile])).code).toBe(2);
    expect((await runCli(['verify', GOLD, '--bundle', goldFile])).code).toBe(2);
    expect((await runCli(['verify', GOLD, '--key-set', p.keySetFile, '--at', iso(T0)])).code).toBe(2);
  });
});
