/**
 * The witness formats against their vectors (test/vectors/witness, written by vectors.gen.ts
 * with node:crypto): policies parsed and refused by line, cosignature key IDs and lines, checked
 * cosigned checkpoints, and add-checkpoint request bodies.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parsePolicy, verifyWitnessedCheckpoint } from '@merchant-verify/verifier';
import { describe, expect, it } from 'vitest';
import { parseCosignature, parseNote, quorumMet } from '#shared';
import { AddCheckpointSyntaxError, formatAddCheckpoint, parseAddCheckpoint } from '../../witness/protocol.ts';
import { cosign, parseWitnessKey } from '../../witness/server/witness-key.ts';
import { thrown } from '../support/thrown.ts';

const VECTORS = join(import.meta.dirname, '../vectors/witness');
const read = <T>(file: string) => JSON.parse(readFileSync(join(VECTORS, file), 'utf8')) as T;

interface Policies {
  valid: { name: string; text: string; logs: number; witnesses: string[]; checks: { cosigned: string[]; met: boolean }[] }[];
  invalid: { name: string; text: string; line: number }[];
}
const policies = read<Policies>('policies.json');

describe('tlog-policy vectors', () => {
  it.each(policies.valid)('parses: $name', (v) => {
    const policy = parsePolicy(v.text, 'p.policy');
    expect(policy.logs).toHaveLength(v.logs);
    expect(policy.witnesses.map((w) => w.name)).toEqual(v.witnesses);
    for (const c of v.checks) expect(quorumMet(policy.quorum, new Set(c.cosigned)), c.cosigned.join(' ')).toBe(c.met);
  });
  it.each(policies.invalid)('refuses, naming the line: $name', (v) => {
    const error = thrown(() => parsePolicy(v.text, 'p.policy')) as { code: string; line: number; message: string };
    expect(error.code).toBe('INVALID_POLICY');
    expect(error.line).toBe(v.line);
    expect(error.message.startsWith(v.line > 0 ? `p.policy:${v.line}: ` : 'p.policy: ')).toBe(true);
  });
});

interface Cosignatures {
  spec_example: { note: string; witness: string; key_id: string; time: number };
  witnesses: { private: string; vkey: string; key_id: string; public_key: string }[];
  lines: { vkey: string; checkpoint: string; time: number; line: string }[];
  checked: {
    name: string;
    policy: string;
    checkpoint: string;
    now: number;
    max_age_ms?: number;
    valid: boolean;
    code?: string;
    cosigners?: string[];
    witnessed_at?: number | null;
  }[];
}
const cosignatures = read<Cosignatures>('cosignatures.json');

describe('cosignature vectors', () => {
  it("reads the spec's example cosignature: key ID, then a big-endian timestamp, then 64 signature bytes", () => {
    const v = cosignatures.spec_example;
    const line = parseNote(v.note).signatures.find((s) => s.name === v.witness)!;
    expect(line.id.toString(16).padStart(8, '0')).toBe(v.key_id);
    expect(parseCosignature(line.signature)).toMatchObject({ time: BigInt(v.time), signature: expect.any(Uint8Array) });
  });
  it.each(cosignatures.witnesses)('a witness key gives its vkey and key ID: $vkey', (v) => {
    const key = parseWitnessKey(v.private, 'vector');
    expect(key.vkey).toBe(v.vkey);
    expect(key.id.toString(16).padStart(8, '0')).toBe(v.key_id);
    expect(Buffer.from(key.publicKey).toString('hex')).toBe(v.public_key);
  });
  it.each(cosignatures.lines)('signs the line of the vector at $time', (v) => {
    const key = parseWitnessKey(cosignatures.witnesses.find((w) => w.vkey === v.vkey)!.private, 'vector');
    expect(cosign(key, v.checkpoint, v.time)).toBe(v.line);
  });
  it.each(cosignatures.checked)('checks a cosigned checkpoint: $name', (v) => {
    const result = verifyWitnessedCheckpoint(v.checkpoint, parsePolicy(v.policy), {
      now: v.now,
      ...(v.max_age_ms ? { maxAgeMs: v.max_age_ms } : {}),
    });
    if (!v.valid) return expect(result).toMatchObject({ valid: false, code: v.code });
    expect(result.valid).toBe(true);
    if (!result.valid) return;
    expect(result.cosigners.map((c) => c.witness)).toEqual(v.cosigners);
    expect(result.witnessedAt).toBe(v.witnessed_at);
  });
});

interface AddCheckpointVectors {
  valid: { name: string; body: string; old: number; proof: string[]; checkpoint: string }[];
  invalid: { name: string; body: string }[];
}
const bodies = read<AddCheckpointVectors>('add-checkpoint.json');

describe('add-checkpoint request vectors', () => {
  it.each(bodies.valid)('parses and writes back: $name', (v) => {
    const request = parseAddCheckpoint(v.body);
    expect(request.oldSize).toBe(v.old);
    expect(request.proof.map((p) => Buffer.from(p).toString('base64'))).toEqual(v.proof);
    expect(request.checkpoint).toBe(v.checkpoint);
    expect(formatAddCheckpoint(request)).toBe(v.body);
  });
  it.each(bodies.invalid)('refuses: $name', (v) => {
    expect(thrown(() => parseAddCheckpoint(v.body))).toBeInstanceOf(AddCheckpointSyntaxError);
  });
});
