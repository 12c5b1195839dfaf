/**
 * The fixture of the `mvr verify` tests: a real gateway over a real build, GOLD's record as it
 * served it, a folder to save records in, and helpers for the CLI's arguments and `--json` line.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { cleanup, startTestGateway, type TestGateway } from './gateway.ts';
import { GOLD, makeProject, type Project, tempDir } from './project.ts';

export let project: Project;
export let gw: TestGateway;
export let dir: string;
/** GOLD's record exactly as the gateway served it. */
export let goldText: string;
export let gold: Record<string, unknown>;

/** Starts the gateway over a fresh build before the file's tests (and stops it after), and reads GOLD's record. */
export function useGoldGateway(): void {
  beforeAll(async () => {
    project = await makeProject();
    gw = await startTestGateway(project);
    dir = await tempDir();
    const res = await gw.verify(GOLD);
    expect(res.status).toBe(200);
    goldText = res.text;
    gold = JSON.parse(goldText) as Record<string, unknown>;
  });
  afterAll(cleanup);
}

export const gatewayArgs = () => ['--base-url', gw.url, '--api-key', gw.key];
/** A key-gated JSON answer of the gateway. */
export const gatewayJson = async (path: string): Promise<unknown> =>
  (await fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${gw.key}` } })).json();

/** Saves a record (text or object) to a file and returns its path. */
export async function saved(name: string, record: string | Record<string, unknown>): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, typeof record === 'string' ? record : JSON.stringify(record));
  return file;
}

/** The one JSON line `--json` prints. */
export function parseJson(stdout: string): Record<string, any> {
  const lines = stdout.trim().split('\n');
  if (lines.length !== 1) throw new Error(`--json printed ${lines.length} lines:\n${stdout}`);
  return JSON.parse(lines[0]!) as Record<string, any>;
}
