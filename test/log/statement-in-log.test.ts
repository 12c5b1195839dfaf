/**
 * Build statements in the log, from the outside: the CLI build appends its statement after its
 * records, so the checkpoint it publishes ends with it, and the gateway's absence answers prove it
 * (`statement_proof`) against the build's checkpoint, live and kept, which `verifyAbsence` checks
 * with the log's key. A build made before statements were logged answers without one.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { verifyAbsence } from '@merchant-verify/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AbsenceProof, formatTlogProof, parseCheckpoint, parseNote, parseTlogProof, statementEntry, statementText } from '#shared';
import { sha256 } from '../../core/crypto/hash.ts';
import { absenceProofSchema } from '../../core/schemas/absence.ts';
import { unbundle } from '../../core/tlog/appender.ts';
import { generateLogKeyText, parseLogKey } from '../../keyring/log-key.ts';
import { buildArgs, runCli } from '../support/cli.ts';
import { cleanup, type TestGateway } from '../support/gateway.ts';
import { expectProblem } from '../support/gateway-expect.ts';
import { gatewayOver, logDir, loggedProject, NOV, vkeyFile } from '../support/logged-project.ts';
import { copyProject, ISSUER, type Project, removeTempDirs, tempDir, UNAUDITED } from '../support/project.ts';

const MID_NOV = Date.parse('2026-11-15T00:00:00Z');
let p: Project, g: TestGateway, vkey: string, keySet: unknown;
/** Each month's build: its id, its checkpoint and its statement file, as the build left them. */
const months: { id: string; checkpoint: string; statement: Buffer; log: unknown; records: number }[] = [];
beforeAll(async () => {
  p = await loggedProject();
  // The CLI refuses a --now ahead of the clock (and the audits are of mid-October): two builds in November.
  for (const now of [NOV, MID_NOV]) {
    const r = await runCli(buildArgs(p, ['--json'], new Date(now).toISOString()));
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const summary = JSON.parse(r.stdout) as { build_id: string; log: unknown; records: number };
    const current = join(p.recordsDir, 'current');
    months.push({
      id: summary.build_id,
      checkpoint: await readFile(join(logDir(p), 'checkpoint'), 'utf8'),
      statement: await readFile(join(current, 'statement.json')),
      log: summary.log,
      records: summary.records,
    });
  }
  g = await gatewayOver(p);
  vkey = (await readFile(vkeyFile(p), 'utf8')).trim();
  keySet = JSON.parse(await readFile(p.keySetFile, 'utf8'));
});
afterAll(async () => {
  await cleanup();
  await removeTempDirs();
});

const sizeOf = (note: string) => parseCheckpoint(parseNote(note).text).size;
const absence = async (query = '') => (await g.request(`/v1/absence?domain=${UNAUDITED}${query}`)).json as unknown as AbsenceProof;
const withLog = (proof: unknown) => verifyAbsence(proof, UNAUDITED, keySet, { log: { vkey } });

describe('the build statement in the log', () => {
  it("a build appends its records, then its statement: the first build's log is records + 1, the second extends it", async () => {
    const [nov, dec] = months as [(typeof months)[0], (typeof months)[0]];
    expect(nov.records).toBe(33);
    expect(nov.log).toMatchObject({ from: 0, to: 34, statement: 33 });
    expect(dec.log).toMatchObject({ from: 34, to: 68, statement: 67 });
    expect([sizeOf(nov.checkpoint), sizeOf(dec.checkpoint)]).toEqual([34, 68]);
    // The last entry of each build is SHA-256(prefix || its statement file's exact bytes).
    const entries = unbundle(await readFile(join(logDir(p), 'tile/entries/000.p/68')));
    expect(Buffer.from(entries[33]!)).toEqual(Buffer.from(statementEntry(sha256, nov.statement)));
    expect(Buffer.from(entries[67]!)).toEqual(Buffer.from(statementEntry(sha256, dec.statement)));
    // The file is the statement's text as a verifier rebuilds it from an answer.
    expect(statementText(JSON.parse(dec.statement.toString('utf8')))).toBe(dec.statement.toString('utf8'));
    // The second checkpoint is an append-only extension of the first, statement entry and all.
    const saved = join(await tempDir(), 'checkpoint');
    await writeFile(saved, nov.checkpoint);
    const check = await runCli(['log', 'check', '--checkpoint', saved, '--log', `${g.url}/log`, '--json']);
    expect(check.code, check.stderr).toBe(0);
    expect(JSON.parse(check.stdout)).toMatchObject({ consistent: true, from: 34, to: 68 });
  });

  it('GET /v1/absence carries statement_proof against the checkpoint record proofs are against, and it verifies with the log key', async () => {
    const proof = await absence();
    expect(absenceProofSchema.parse(proof)).toEqual(proof);
    const text = proof.statement_proof!;
    expect(parseTlogProof(text)).toMatchObject({ extra: null, index: 67 });
    expect(parseTlogProof(text).checkpoint).toBe(months[1]!.checkpoint);
    expect(parseTlogProof((await g.request('/v1/proof?domain=acme-outdoor.example')).text).checkpoint).toBe(months[1]!.checkpoint);
    expect(withLog(proof)).toMatchObject({
      valid: true,
      build: months[1]!.id,
      statementLog: { index: 67, checkpoint: { size: 68, origin: `${ISSUER}/log` } },
    });
  });

  it('fails with the log key when the proof, the statement or the checkpoint is altered, or the proof is missing', async () => {
    const proof = await absence();
    const parsed = parseTlogProof(proof.statement_proof!);
    const notLogged = (changed: unknown) => expect(withLog(changed)).toMatchObject({ valid: false, code: 'STATEMENT_NOT_LOGGED' });
    // The proof: another index, a hash of its path changed.
    notLogged({ ...proof, statement_proof: formatTlogProof({ ...parsed, index: 66 }) });
    const path = parsed.proof.map((h) => h.slice());
    path[0]![0]! ^= 1;
    notLogged({ ...proof, statement_proof: formatTlogProof({ ...parsed, proof: path }) });
    // The statement: November's, signed, with its own map's neighbours (a v2 map commits to each build's records, so
    // November's statement never holds with December's), is not the entry December's proof proves.
    const novProof = await absence(`&build=${months[0]!.id}`);
    expect(novProof.statement).toEqual(JSON.parse(months[0]!.statement.toString('utf8')));
    expect(novProof.statement.domain_map).not.toEqual(proof.statement.domain_map);
    expect(verifyAbsence({ ...proof, statement: novProof.statement }, UNAUDITED, keySet)).toMatchObject({ code: 'NOT_ABSENT' });
    expect(verifyAbsence(novProof, UNAUDITED, keySet)).toMatchObject({ valid: true });
    notLogged({ ...novProof, statement_proof: proof.statement_proof });
    // The checkpoint: a size line changed breaks the log's signature.
    const forged = parsed.checkpoint.replace(/\n68\n/, '\n69\n');
    expect(forged).not.toBe(parsed.checkpoint);
    notLogged({ ...proof, statement_proof: formatTlogProof({ ...parsed, checkpoint: forged }) });
    // No proof at all; and the key of another log.
    const { statement_proof: _, ...without } = proof;
    notLogged(without);
    const other = parseLogKey(generateLogKeyText(`${ISSUER}/log`), 'another log key').vkey;
    expect(verifyAbsence(proof, UNAUDITED, keySet, { log: { vkey: other } })).toMatchObject({ code: 'STATEMENT_NOT_LOGGED' });
    // Without the log key nothing changes: the map and the signed statement decide.
    expect(verifyAbsence(without, UNAUDITED, keySet)).toMatchObject({ valid: true });
  });

  it("?build= of a kept build proves its statement against that build's own checkpoint", async () => {
    const proof = await absence(`&build=${months[0]!.id}`);
    expect(parseTlogProof(proof.statement_proof!).checkpoint).toBe(months[0]!.checkpoint);
    expect(withLog(proof)).toMatchObject({ valid: true, build: months[0]!.id, statementLog: { index: 33, checkpoint: { size: 34 } } });
  });

  it('a build made before statements were logged answers without statement_proof, which the log key then refuses', async () => {
    const q = await copyProject(p);
    // Such a build's manifest names no statement entry (its log ended with its last record).
    const manifestFile = join(q.recordsDir, 'builds', months[0]!.id, 'manifest.json');
    const manifest = JSON.parse(await readFile(manifestFile, 'utf8')) as { log: Record<string, unknown> };
    delete manifest.log.statement;
    await writeFile(manifestFile, JSON.stringify(manifest));
    const old = await gatewayOver(q);
    const proof = (await old.request(`/v1/absence?domain=${UNAUDITED}&build=${months[0]!.id}`)).json;
    expect(proof).not.toHaveProperty('statement_proof');
    expect(verifyAbsence(proof, UNAUDITED, keySet)).toMatchObject({ valid: true, build: months[0]!.id });
    expect(withLog(proof)).toMatchObject({ valid: false, code: 'STATEMENT_NOT_LOGGED' });
    // The live build, made with its statement logged, still proves it.
    expect(withLog((await old.request(`/v1/absence?domain=${UNAUDITED}`)).json)).toMatchObject({ valid: true });
    await old.close();
  });

  it('a statement the tiles cannot prove is 503 UNAVAILABLE, never an answer without its proof, and is back once they are', async () => {
    const q = await copyProject(p);
    const fresh = await gatewayOver(q);
    const tile = join(logDir(q), 'tile/0/000.p/68');
    const saved = await readFile(tile);
    await rm(tile);
    try {
      expectProblem(await fresh.request(`/v1/absence?domain=${UNAUDITED}`), 503, 'UNAVAILABLE');
    } finally {
      await writeFile(tile, saved);
    }
    expect(withLog((await fresh.request(`/v1/absence?domain=${UNAUDITED}`)).json)).toMatchObject({ valid: true });
    await fresh.close();
  });
});
