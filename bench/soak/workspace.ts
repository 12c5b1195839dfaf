import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readlink, rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { formatTimestamp } from '#shared';
import { createApiKey, revokeApiKey } from '../../access/api-keys.ts';
import { type BuildSummary, runBuild } from '../../builder/build.ts';
import { CURRENT_LINK } from '../../core/layout.ts';
import { defaultSchemaUrl } from '../../core/rules/record.ts';
import { createLogKey, logOrigin } from '../../keyring/log-key.ts';
import { activeKid, keygen } from '../../keyring/signing-keys.ts';
import { generateAudits } from '../generate-audits.ts';
import type { BuildMark, Timeline } from './timeline.ts';
import { SoakWitnesses } from './witnesses.ts';

const ISSUER = 'merchant-verify.example';

/** The soak's temp folder: audits, keys (signing, log, API), records, public files (key set, log), witnesses. */
export interface Workspace {
  dir: string;
  auditsDir: string;
  auditsFile: string;
  recordsDir: string;
  publicDir: string;
  keysDir: string;
  apiKeysFile: string;
  /** Audited domains (already normalized by the generator), in file order. */
  domains: string[];
  indexOf: Map<string, number>;
  /** Current audit score per domain index (what the next build will sign). */
  scores: (number | null)[];
  apiKey: string;
  revokedKey: string;
  /** A key of the mirror scope, for `mvr mirror --from` the gateway. */
  mirrorKey: string;
  /** The log's witnesses; every build goes live only once two of three cosigned its checkpoint. */
  witnesses: SoakWitnesses;
}

export async function makeTempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'mvr-soak-'));
}

/**
 * Generates the audits, makes a signing key, a log key and its three witnesses, and three API keys
 * (one revoked, one of the mirror scope). The first build is separate.
 */
export async function prepareWorkspace(dir: string, audits: number, seed: number): Promise<Workspace> {
  const ws: Workspace = {
    dir,
    auditsDir: join(dir, 'audits'),
    auditsFile: join(dir, 'audits', 'audits.jsonl'),
    recordsDir: join(dir, 'records'),
    publicDir: join(dir, 'public'),
    keysDir: join(dir, 'keys'),
    apiKeysFile: join(dir, 'keys', 'api-keys.json'),
    domains: [],
    indexOf: new Map(),
    scores: [],
    apiKey: '',
    revokedKey: '',
    mirrorKey: '',
    witnesses: null as unknown as SoakWitnesses,
  };
  await mkdir(ws.auditsDir, { recursive: true });
  const out = createWriteStream(ws.auditsFile);
  await generateAudits(audits, seed, out);
  out.end();
  await once(out, 'finish');
  for await (const line of createInterface({ input: createReadStream(ws.auditsFile) })) {
    if (!line) continue;
    const audit = JSON.parse(line) as { domain: string; score: number | null };
    ws.indexOf.set(audit.domain, ws.domains.length);
    ws.domains.push(audit.domain);
    ws.scores.push(audit.score);
  }
  await keygen(ws.keysDir);
  await createLogKey(ws.keysDir, logOrigin(ISSUER));
  ws.witnesses = await SoakWitnesses.start(ws.keysDir, dir);
  ws.mirrorKey = (await createApiKey(ws.apiKeysFile, 'soak-mirror', { scopes: ['mirror'] })).key;
  ws.apiKey = (await createApiKey(ws.apiKeysFile, 'soak')).key;
  const revoked = await createApiKey(ws.apiKeysFile, 'soak-revoked');
  await revokeApiKey(ws.apiKeysFile, revoked.entry.id);
  ws.revokedKey = revoked.key;
  return ws;
}

/**
 * Runs the real build (runBuild, in this process, worker threads included) and records it on
 * the timeline before it starts, so records it swaps in are recognised while it is still pruning.
 */
export async function buildAndMark(
  ws: Workspace,
  timeline: Timeline,
  label: string,
  workers?: number,
): Promise<{ mark: BuildMark; summary: BuildSummary }> {
  const keyId = await activeKid(ws.keysDir);
  if (!keyId) throw new Error('no active signing key');
  // issued_at has millisecond precision: make sure two builds never share one.
  const last = timeline.builds.at(-1);
  let now = Date.now();
  if (last && formatTimestamp(now) <= last.issuedAt) now = Date.parse(last.issuedAt) + 1;
  const mark: BuildMark = {
    index: timeline.builds.length,
    label,
    buildId: null,
    issuedAt: formatTimestamp(now),
    keyId,
    scores: [...ws.scores],
    startedAt: performance.now(),
    swappedAt: null,
    doneAt: null,
  };
  timeline.builds.push(mark);
  // A build refused before going live (the witness outage) never swaps: its mark stays unlive.
  // The swap is one rename of the `current` link, inside runBuild: watch for it (every 10 ms, only while the build runs).
  const link = join(ws.recordsDir, CURRENT_LINK);
  const before = await readlink(link).catch(() => null);
  let polling = false;
  const watch = setInterval(() => {
    if (polling || mark.swappedAt !== null) return;
    polling = true;
    readlink(link)
      .then((target) => {
        if (target !== before && mark.swappedAt === null) mark.swappedAt = performance.now();
      })
      .catch(() => undefined)
      .finally(() => (polling = false));
  }, 10);
  const summary = await runBuild({
    auditsDir: ws.auditsDir,
    recordsDir: ws.recordsDir,
    publicDir: ws.publicDir,
    keysDir: ws.keysDir,
    issuer: ISSUER,
    schemaUrl: defaultSchemaUrl(ISSUER),
    now,
    workers,
    witnessPolicy: ws.witnesses.policyFile,
    onWarning: () => undefined,
  }).finally(() => clearInterval(watch));
  mark.doneAt = performance.now();
  mark.buildId = summary.buildId;
  mark.swappedAt ??= mark.doneAt;
  if (summary.issuedAt !== mark.issuedAt || summary.keyId !== keyId || summary.records !== ws.domains.length) {
    throw new Error(`build ${label} is not what was asked: ${summary.issuedAt} ${summary.keyId} ${summary.records} records`);
  }
  return { mark, summary };
}

/** Changes the score of the chosen domains in the audits file (rewritten, then renamed into place). */
export async function changeScores(ws: Workspace, chosen: (index: number) => boolean): Promise<number> {
  const tmp = join(ws.dir, 'audits.next.jsonl');
  const out = createWriteStream(tmp);
  let index = 0,
    changed = 0;
  for await (const line of createInterface({ input: createReadStream(ws.auditsFile) })) {
    if (!line) continue;
    const audit = JSON.parse(line) as { score: number | null };
    if (chosen(index)) {
      const old = audit.score ?? 40;
      audit.score = Math.round(((old + 37.25) % 100) * 100) / 100;
      ws.scores[index] = audit.score;
      changed++;
    }
    index++;
    if (!out.write(`${JSON.stringify(audit)}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  await rename(tmp, ws.auditsFile);
  return changed;
}
