/** Logged build projects for the transparency-log tests: a log key, builds a month apart, a gateway over them. */
import { join } from 'node:path';
import { createLogKey, logOrigin } from '../../keyring/log-key.ts';
import { startTestGateway } from './gateway.ts';
import { ISSUER, makeProject, type Project } from './project.ts';

/** The two months the builds are dated (their `now`). */
export const NOV = Date.parse('2026-11-01T00:00:00Z');
export const DEC = Date.parse('2026-12-01T00:00:00Z');
export const logDir = (p: { publicDir: string }) => join(p.publicDir, 'log');
export const vkeyFile = (p: { publicDir: string }) => join(p.publicDir, '.well-known/merchant-verify-log.vkey');

export async function loggedProject(): Promise<Project> {
  const p = await makeProject({ sign: true, build: false });
  await createLogKey(p.keysDir, logOrigin(ISSUER));
  return p;
}

/** A gateway over a build project (the gateway helpers' project shape). */
export async function gatewayOver(p: Project) {
  const project: Project = { ...p, apiKeysFile: join(p.keysDir, 'api-keys.json') };
  return startTestGateway(project);
}
