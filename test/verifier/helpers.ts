/**
 * The verifier and MCP tests' helpers: the shared test fixture's (test/support/) projects,
 * gateways and CLI runs, re-exported for the suites that import them here, plus readers of a
 * project's live records.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseKeySet, type KeySet } from '@merchant-verify/verifier/keyset';
import { CURRENT_LINK, MANIFEST_FILE } from '../../core/layout.ts';
import { liveRecordFile, type Project } from '../support/project.ts';
import type { TestGateway } from '../support/gateway.ts';

export { build, ISSUER, liveRecordFile, makeProject, NOW, NOW_ISO, ROOT, SCHEMA_URL, tempDir, type Project } from '../support/project.ts';
export { cleanup, startTestGateway, type TestGateway } from '../support/gateway.ts';
export { BIN, cliEnv, runCli, type CliResult } from '../support/cli.ts';
export { waitFor } from '../support/wait.ts';
export { connectHttpClient, firstText } from '../support/mcp.ts';
/** A loopback port nothing listens on (bound, then released). */
export { freePort as closedPort } from '../support/ports.ts';

/** A sample domain with a gold, verified record (last audited 2026-10-15T12:00Z). */
export const GOLD = 'acme-outdoor.example';
/** A valid domain that no sample audits. */
export const UNAUDITED = 'never-audited-shop.example';

// ---------------------------------------------------------------------------------------------
// The live build

export interface StoredRecord {
  bytes: Buffer;
  text: string;
  record: Record<string, unknown>;
}

/** One live record: its exact bytes and parsed form. */
export async function liveRecord(p: Project, domain: string): Promise<StoredRecord> {
  const bytes = await readFile(liveRecordFile(p, domain));
  const text = bytes.toString('utf8');
  return { bytes, text, record: JSON.parse(text) as Record<string, unknown> };
}

/** Every record of the live build (not the manifest), by the file's domain. */
export async function liveRecords(p: Project): Promise<Map<string, StoredRecord>> {
  const out = new Map<string, StoredRecord>();
  const base = join(p.recordsDir, CURRENT_LINK);
  // Records live in shard folders; the build's own files (manifest, statement) sit at its top.
  const walk = async (dir: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const abs = join(dir, e.name);
      if (e.isDirectory()) await walk(abs);
      else if (e.name.endsWith('.json') && dir !== base) {
        const bytes = await readFile(abs);
        const text = bytes.toString('utf8');
        out.set(e.name.slice(0, -'.json'.length), { bytes, text, record: JSON.parse(text) as Record<string, unknown> });
      }
    }
  };
  await walk(base);
  return out;
}

/** The live build's manifest. */
export async function manifest(p: Project): Promise<{ records: number; key_id: string | null; key_ids_published: string[] }> {
  return JSON.parse(await readFile(join(p.recordsDir, CURRENT_LINK, MANIFEST_FILE), 'utf8'));
}

/** The published key set file, parsed (and checked). */
export async function publishedKeySet(p: Project): Promise<KeySet> {
  return parseKeySet(JSON.parse(await readFile(p.keySetFile, 'utf8')));
}

/** Request log lines of the gateway for one path (method, status). */
export function requestsTo(t: TestGateway, path: string): { method: unknown; status: unknown }[] {
  return t.logs
    .filter((l) => (l as Record<string, unknown>).msg === 'request' && (l as Record<string, unknown>).path === path)
    .map((l) => ({ method: (l as Record<string, unknown>).method, status: (l as Record<string, unknown>).status }));
}
