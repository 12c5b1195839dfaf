/**
 * The witness client against stand-ins that answer as the two public C2SP witnesses do, each
 * answer quoted from their add-checkpoint handlers; a witness that redirects, one that answers
 * without end, and a policy that names the endpoint instead of the prefix.
 */
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parsePolicy } from '@merchant-verify/verifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readWitnessPolicy } from '../../witness/build-phase/witnessing.ts';
import { MAX_ANSWER_BYTES } from '../../witness/client/exchange.ts';
import { submitCheckpoint } from '../../witness/client/submit.ts';
import { parseAddCheckpoint } from '../../witness/protocol.ts';
import { originHash } from '../../witness/server/state.ts';
import { removeTempDirs, tempDir } from '../support/project.ts';
import { policyText, startTestWitness, type TestWitness, testLog } from '../support/witness.ts';

const log = testLog();
let real: TestWitness;
let standIn: Server;
let standInUrl: string;
type Answer = { status: number; headers?: Record<string, string>; body?: string };
/** The stand-in's answer (after any queued in `first`), and the old sizes it was sent. */
let answer: Answer = { status: 500 };
const first: Answer[] = [];
const oldSizes: number[] = [];

beforeAll(async () => {
  real = await startTestWitness('real', [log]);
  standIn = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      oldSizes.push(parseAddCheckpoint(body).oldSize);
      const a = first.shift() ?? answer;
      res.writeHead(a.status, a.headers ?? {}).end(a.body ?? '');
    });
  });
  await new Promise<void>((resolve) => standIn.listen(0, '127.0.0.1', resolve));
  standInUrl = `http://127.0.0.1:${(standIn.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await real.close();
  standIn.closeAllConnections();
  await new Promise((resolve) => standIn.close(resolve));
  await removeTempDirs();
});

const witness = (url = standInUrl) => parsePolicy(policyText(log, [{ name: 'w', vkey: real.key.vkey, url }], 'quorum w')).witnesses[0]!;
const submit = (url?: string) => submitCheckpoint(witness(url), log.checkpoint(8), async () => [], { timeoutMs: 5000 });
const TEXT = { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' };

describe('litewitness (FiloSottile/litetlog, internal/witness/witness.go)', () => {
  it('403 "unknown log": refused, naming both meanings of its 403 and quoting it', async () => {
    // case errUnknownLog, errInvalidSignature: http.Error(rw, err.Error(), http.StatusForbidden)
    // with errUnknownLog = errors.New("unknown log")
    answer = { status: 403, headers: TEXT, body: 'unknown log\n' };
    expect(await submit()).toMatchObject({
      ok: false,
      code: 'WITNESS_REFUSED',
      status: 403,
      message: expect.stringMatching(/does not witness this log, or the log's signature does not verify.*"unknown log"/),
    });
  });

  it('409 with its size (text/x.tlog.size): the client sends again from that size', async () => {
    // rw.Header().Set("Content-Type", "text/x.tlog.size"); rw.WriteHeader(http.StatusConflict); fmt.Fprintf(rw, "%d\n", err.known)
    first.push({ status: 409, headers: { 'Content-Type': 'text/x.tlog.size' }, body: '3\n' });
    // Anything else: http.Error(rw, err.Error(), http.StatusInternalServerError)
    answer = { status: 500, headers: TEXT, body: 'database is locked\n' };
    oldSizes.length = 0;
    expect(await submit()).toMatchObject({ ok: false, code: 'WITNESS_UNAVAILABLE', status: 500 });
    expect(oldSizes).toEqual([0, 3]);
  });

  it('422 "bad consistency proof": refused', async () => {
    // case errProof: http.Error(rw, err.Error(), http.StatusUnprocessableEntity); errProof = errors.New("bad consistency proof")
    answer = { status: 422, headers: TEXT, body: 'bad consistency proof\n' };
    expect(await submit()).toMatchObject({ ok: false, code: 'WITNESS_REFUSED', status: 422 });
  });
});

describe("transparency-dev's witness (its HTTP handler in http.go, handleUpdate)", () => {
  it('404 without a body for an unknown log: refused, saying the URL may not be the prefix either', async () => {
    // case errors.Is(updateErr, ErrUnknownLog): return http.StatusNotFound, nil, "", nil
    answer = { status: 404 };
    expect(await submit()).toMatchObject({
      ok: false,
      code: 'WITNESS_REFUSED',
      status: 404,
      message: expect.stringMatching(/does not witness this log, or the policy URL is not the prefix/),
    });
  });

  it('a same-size root mismatch: 409 without a body (older versions) or 422 without one (ErrRootMismatch), both refusals', async () => {
    answer = { status: 409 };
    expect(await submit()).toMatchObject({
      ok: false,
      code: 'WITNESS_REFUSED',
      status: 409,
      message: expect.stringMatching(/another checkpoint of this log at this size/),
    });
    // case errors.Is(updateErr, ErrRootMismatch): return http.StatusUnprocessableEntity, nil, "", nil
    answer = { status: 422 };
    expect(await submit()).toMatchObject({ ok: false, code: 'WITNESS_REFUSED', status: 422 });
  });

  it('429 when it pushes back: unavailable (ask again later), with its Retry-After', async () => {
    // case errors.Is(updateErr, ErrPushback): return http.StatusTooManyRequests, nil, "", nil
    answer = { status: 429, headers: { 'Retry-After': '120' } };
    expect(await submit()).toMatchObject({
      ok: false,
      code: 'WITNESS_UNAVAILABLE',
      status: 429,
      message: expect.stringMatching(/busy \(429\).*after 120/),
    });
  });

  it('500 for an unknown error, 503 from a proxy: unavailable', async () => {
    // default: return http.StatusInternalServerError, nil, "", updateErr
    for (const status of [500, 503]) {
      answer = { status };
      expect(await submit()).toMatchObject({ ok: false, code: 'WITNESS_UNAVAILABLE', status });
    }
  });

  it('400 for a body it cannot parse: refused', async () => {
    // if err != nil { w.WriteHeader(http.StatusBadRequest); return } (parseBody)
    answer = { status: 400 };
    expect(await submit()).toMatchObject({ ok: false, code: 'WITNESS_REFUSED', status: 400 });
  });
});

describe('what a client never does', () => {
  it('follows no redirect: the witness redirected to is never sent the checkpoint', async () => {
    answer = { status: 307, headers: { Location: `${real.url}/add-checkpoint` } };
    expect(await submit()).toMatchObject({
      ok: false,
      code: 'WITNESS_REFUSED',
      status: 307,
      message: expect.stringMatching(/redirect .*not followed/),
    });
    expect(await real.state.readByHash(originHash('log.test/log'))).toBeNull();
  });

  it('reads no answer past the cap', async () => {
    answer = { status: 200, headers: TEXT, body: `\u2014 w ${'A'.repeat(MAX_ANSWER_BYTES)}\n` };
    expect(await submit()).toMatchObject({
      ok: false,
      code: 'WITNESS_REFUSED',
      status: null,
      message: expect.stringMatching(new RegExp(`more than ${MAX_ANSWER_BYTES} bytes`)),
    });
  });

  it('posts to no policy URL that is the endpoint itself: the policy is refused saying so', async () => {
    const endpoint = `${real.url}/add-checkpoint`;
    expect(await submit(endpoint)).toMatchObject({
      ok: false,
      code: 'WITNESS_REFUSED',
      message: expect.stringMatching(/the add-checkpoint endpoint itself: a policy names the submission prefix/),
    });
    const file = `${await tempDir()}/witnesses.policy`;
    await writeFile(file, policyText(log, [{ name: 'w', vkey: real.key.vkey, url: endpoint }], 'quorum w'));
    await expect(readWitnessPolicy(file)).rejects.toMatchObject({ code: 'INVALID_CONFIG', message: expect.stringMatching(/witness w/) });
    expect(await real.state.readByHash(originHash('log.test/log'))).toBeNull();
  });
});
