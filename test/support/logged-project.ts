/** Logged build projects for the transparency-log tests: a log key, builds a month apart, a gateway over them. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createLogKey, logOrigin } from '../../keyring/log-key.ts';
import { type GatewayOverrides, startTestGateway } from './gateway.ts';
import { readCurrentRecords, snapshot } from './outputs.ts';
import { build, ISSUER, makeProject, type Project } from './project.ts';

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
export async function gatewayOver(p: Project, overrides: GatewayOverrides = {}) {
  const project: Project = { ...p, apiKeysFile: join(p.keysDir, 'api-keys.json') };
  return startTestGateway(project, overrides);
}

/**
 * A logged project built in November and again in December, with a gateway over it: what the
 * transparency-log tests check, and the November checkpoint and log files to compare against.
 */
export async function twoLoggedMonths() {
  const p = await loggedProject();
  const nov = await build(p, { now: NOV });
  const novCheckpoint = await readFile(join(logDir(p), 'checkpoint'), 'utf8');
  const novFiles = await snapshot(logDir(p));
  const dec = await build(p, { now: DEC });
  const g = await gatewayOver(p);
  const vkey = (await readFile(vkeyFile(p), 'utf8')).trim();
  const keySet = JSON.parse(await readFile(p.keySetFile, 'utf8')) as unknown;
  const domains = [...(await readCurrentRecords(p.recordsDir)).keys()].sort();
  return { p, nov, novCheckpoint, novFiles, dec, g, vkey, keySet, domains };
}
