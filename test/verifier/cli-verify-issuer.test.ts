/**
 * `mvr verify` holds to one issuer, as the gateway does: a never-audited answer is proven only by
 * the absence proof of a build of the issuer it names. Run through the real CLI.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KEY_SET_PATH } from '@merchant-verify/verifier';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import { ISSUER } from '../support/project.ts';
import { gatewayJson, gw, parseJson, project, saved, useGoldGateway } from '../support/verify-cli.ts';

useGoldGateway();

const NEVER = 'never-audited-issuer-check.example';

describe('mvr verify: one issuer', () => {
  it("a never-audited answer naming another issuer than the proving build is not proven (exit 16); the same answer under the build's issuer is (exit 15)", async () => {
    const answer = (await (
      await fetch(`${gw.url}/v1/verify?domain=${NEVER}`, { headers: { authorization: `Bearer ${gw.key}` } })
    ).json()) as Record<string, unknown>;
    expect(answer).toMatchObject({ status: 'unverified', issuer: ISSUER });
    const proof = await saved('issuer-absence.json', (await gatewayJson(`/v1/absence?domain=${NEVER}`)) as Record<string, unknown>);
    const keys = await saved('issuer-keys.json', await readFile(join(project.publicDir, KEY_SET_PATH), 'utf8'));
    const same = await runCli([
      'verify',
      '--file',
      await saved('issuer-same.json', answer),
      '--absence',
      proof,
      '--key-set',
      keys,
      '--json',
    ]);
    expect(same.code, same.stderr).toBe(15);
    const other = await runCli([
      'verify',
      '--file',
      await saved('issuer-other.json', { ...answer, issuer: 'other-issuer.example' }),
      '--absence',
      proof,
      '--key-set',
      keys,
      '--json',
    ]);
    expect(other.code, other.stderr).toBe(16);
    expect(parseJson(other.stdout)).toMatchObject({
      absence: {
        valid: false,
        code: 'NOT_ABSENT',
        message: `the answer names issuer other-issuer.example, but the build proving the absence is ${ISSUER}'s`,
      },
    });
  });
});
