/**
 * The Ed25519 edge cases (test/vectors/ed25519-cases.ts, decision 0027) at each call site of the
 * service's check (core/crypto/ed25519.ts), signed over what that site verifies: the log key's note check
 * (`openNoteWith`, `openCheckpoint`: the build's, the monitor's and the publisher's reading of a
 * checkpoint), the witness server's check of the log's signature (a real `mvr witness` server over
 * HTTP) and the witness client's check of a cosignature (`submitCheckpoint` against a witness
 * answering with it). Each accepts exactly the cases every verifier accepts; the record scheme's
 * site meets them in test/core/ed25519-edge-vectors.test.ts and test/verifier/ed25519-agreement.test.ts.
 */
import { mkdtemp } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cosignatureKeyId,
  cosignatureLine,
  cosignedMessage,
  formatCheckpoint,
  type NoteVerifierKey,
  noteKeyId,
  parseNote,
  signatureLine,
} from '#shared';
import { nodeEd25519Verify } from '../../core/crypto/ed25519.ts';
import { hasher, sha256 } from '../../core/crypto/hash.ts';
import { openCheckpoint, openNoteWith } from '../../keyring/log-key.ts';
import { submitCheckpoint } from '../../witness/client/submit.ts';
import { formatAddCheckpoint } from '../../witness/protocol.ts';
import { type RunningWitness, startWitness } from '../../witness/server/http.ts';
import { WitnessState } from '../../witness/server/state.ts';
import { generateWitnessKeyText, parseWitnessKey } from '../../witness/server/witness-key.ts';
import { testLog } from '../support/witness.ts';
import { edgeCases } from '../vectors/ed25519-cases.ts';
import type { Vector } from '../vectors/ed25519-construct.ts';

const bytes = (h: string): Uint8Array => new Uint8Array(Buffer.from(h, 'hex'));
const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
/** node:crypto's verdicts differ by Node.js line: the line running this test. */
const LINE = String(Math.min(26, Number(process.versions.node.split('.')[0]))) as keyof Vector['node_crypto'];
const accepted = (v: Vector) => v.record_verifier === 'valid';
const CLASSES = 10;

// A log's checkpoint note (size 0: every witness takes it from any state), each case its log signature.
const ORIGIN = 'edge.test/log';
const checkpointText = formatCheckpoint({ origin: ORIGIN, size: 0, root: hasher.empty() });
const noteCases = edgeCases(utf8(checkpointText));
const logKey = (v: Vector): NoteVerifierKey => {
  const publicKey = bytes(v.public_key);
  return { name: ORIGIN, id: noteKeyId(sha256, ORIGIN, publicKey), publicKey };
};
const signedNote = (v: Vector) => `${checkpointText}\n${signatureLine(logKey(v), bytes(v.signature))}`;

// A real log's checkpoint, each case a witness's cosignature of it at TIME by the case's key.
const log = testLog();
const checkpoint = log.checkpoint(5);
const TIME = 1_767_225_600;
const cosignedCases = edgeCases(cosignedMessage(parseNote(checkpoint).text, TIME));
const WITNESS = 'edge.test/witness';
const witnessKey = (v: Vector): NoteVerifierKey => {
  const publicKey = bytes(v.public_key);
  return { name: WITNESS, id: cosignatureKeyId(sha256, WITNESS, publicKey), publicKey };
};

let server: RunningWitness;
let fake: Server;
let fakeUrl: string;
let fakeAnswer = '';
beforeAll(async () => {
  const key = parseWitnessKey(generateWitnessKeyText('checker.test/witness'), 'checker');
  const state = await new WitnessState(await mkdtemp(join(tmpdir(), 'witness-'))).open();
  server = await startWitness(
    { key, logs: noteCases.map((v) => ({ origin: ORIGIN, key: logKey(v) })), state, clock: () => TIME * 1000 },
    { host: '127.0.0.1', port: 0 },
  );
  fake = createServer((req, res) => req.resume().on('end', () => res.writeHead(200, { 'Content-Type': 'text/plain' }).end(fakeAnswer)));
  await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
  fakeUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await server.close();
  fake.closeAllConnections();
  await new Promise((resolve) => fake.close(resolve));
});

/** The witness client's verdict on a witness that answers 200 with this case's cosignature. */
async function clientTakes(v: Vector): Promise<boolean> {
  fakeAnswer = cosignatureLine(witnessKey(v), TIME, bytes(v.signature));
  const witness = { name: 'w', vkey: witnessKey(v), url: fakeUrl };
  const submission = await submitCheckpoint(witness, checkpoint, (from) => log.proof(from, 5), { timeoutMs: 5000 });
  if (!submission.ok) expect(submission).toMatchObject({ code: 'WITNESS_REFUSED', status: 200 });
  return submission.ok;
}

describe("the cases signed over each call site's message", () => {
  it('hold every class, over a note and over a cosigned checkpoint alike', () => {
    expect(new Set(noteCases.map((v) => v.class)).size).toBe(CLASSES);
    expect(new Set(cosignedCases.map((v) => v.class)).size).toBe(CLASSES);
    expect(noteCases.filter(accepted).map((v) => v.id)).toEqual(['honest', 'mixed-order-key-exact']);
  });
});

describe("the log key's note check", () => {
  it.each(noteCases.map((v) => [v.id, v] as const))('%s: opened only when every verifier accepts it', (_id, v) => {
    const open = () => openNoteWith(signedNote(v), logKey(v));
    if (accepted(v)) expect(open()).toBe(checkpointText);
    else expect(open).toThrow(/does not verify/);
    const read = () => openCheckpoint(signedNote(v), logKey(v), 'the case');
    if (accepted(v)) expect(read()).toMatchObject({ origin: ORIGIN, size: 0 });
    else expect(read).toThrow(expect.objectContaining({ code: 'LOG_INCONSISTENT' }));
  });
});

describe("the witness server's check of the log's signature", () => {
  it.each(noteCases.map((v) => [v.id, v] as const))('%s: cosigned (200) only when every verifier accepts it, else 403', async (_id, v) => {
    const res = await fetch(`${server.url}/add-checkpoint`, {
      method: 'POST',
      body: formatAddCheckpoint({ oldSize: 0, proof: [], checkpoint: signedNote(v) }),
    });
    expect(res.status, await res.text()).toBe(accepted(v) ? 200 : 403);
  });
});

describe("the witness client's cosignature check", () => {
  it.each(cosignedCases.map((v) => [v.id, v] as const))('%s: taken only when every verifier accepts it', async (_id, v) => {
    expect(await clientTakes(v)).toBe(accepted(v));
  });

  it('refuses the cosignatures node:crypto alone accepts on Node 20 and 22 (a non-canonical key, small-order points)', async () => {
    const nodeOnly = cosignedCases.filter((v) => v.node_crypto['20'] && !accepted(v));
    expect(nodeOnly.map((v) => v.id)).toEqual(expect.arrayContaining(['identity-key-non-canonical', 'identity-r']));
    for (const v of nodeOnly) {
      const message = cosignedMessage(parseNote(checkpoint).text, TIME);
      // What node:crypto says on the line running this (Node 20 and 22: yes), and the client's answer.
      expect(nodeEd25519Verify(bytes(v.signature), message, bytes(v.public_key), 'w'), v.id).toBe(v.node_crypto[LINE]);
      expect(await clientTakes(v), v.id).toBe(false);
    }
  });
});
