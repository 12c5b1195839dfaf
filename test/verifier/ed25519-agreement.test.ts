/**
 * Every constructed Ed25519 edge case (test/vectors/ed25519-edge-cases.json) as a record: signed or
 * forged over the file's record, its key set written to a real file. The gateway reads that file
 * as it reads the published key set (KeySetSource) and verifies with node:crypto (verifyRecordNode);
 * the client hands the same set to the portable verifier (verifyRecord, @noble/ed25519). Both must
 * give the recorded verdict, on every Node line.
 */

import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verifyRecord } from '@merchant-verify/verifier';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeBase64url } from '#shared';
import { jwkThumbprint, verifyRecordNode } from '../../core/crypto/signing.ts';
import { KeyTrust } from '../../core/rules/key-trust.ts';
import { KeySetSource, keySetFile } from '../../storage/key-set-source.ts';

interface EdgeVector {
  id: string;
  class: string;
  public_key: string;
  signature: string;
  record_verifier: string;
}
const file = JSON.parse(readFileSync(new URL('../vectors/ed25519-edge-cases.json', import.meta.url), 'utf8')) as {
  record: Record<string, unknown>;
  vectors: EdgeVector[];
};
const b64 = (hex: string): string => encodeBase64url(new Uint8Array(Buffer.from(hex, 'hex')));

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

/** The record signed (or forged) as the vector says, and its key set as published. */
function forged(v: EdgeVector): { record: Record<string, unknown>; keySet: { keys: Record<string, unknown>[] } } {
  const x = b64(v.public_key);
  const kid = jwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x });
  return {
    record: { ...file.record, key_id: kid, signature: `ed25519:${b64(v.signature)}` },
    keySet: { keys: [{ kty: 'OKP', crv: 'Ed25519', x, kid, use: 'sig', alg: 'EdDSA' }] },
  };
}

/** The gateway's verdict: the key set file read by KeySetSource, the record by verifyRecordNode. */
async function gatewayVerdict(record: unknown, keySet: unknown): Promise<{ verdict: string; error: string | null }> {
  const dir = await mkdtemp(join(tmpdir(), 'mvr-ed25519-agreement-'));
  dirs.push(dir);
  const path = join(dir, 'keys.json');
  await writeFile(path, JSON.stringify(keySet));
  const source = new KeySetSource(keySetFile(path), new KeyTrust());
  await source.refresh();
  const state = source.state();
  // A refused key set leaves the gateway without one: every record is STORE_UNAVAILABLE until it is fixed.
  if (!state.ok) return { verdict: 'INVALID_KEY_SET', error: state.error };
  const result = verifyRecordNode(record, source.get().keySet);
  return { verdict: result.valid ? 'valid' : result.code, error: null };
}

/** The client's verdict: the portable verifier with the key set as fetched. */
function clientVerdict(record: unknown, keySet: unknown): string {
  try {
    const result = verifyRecord(record, keySet);
    return result.valid ? 'valid' : result.code;
  } catch (error) {
    return (error as { code: string }).code;
  }
}

describe('the gateway and the client agree on every constructed Ed25519 edge case, as a record', () => {
  it('covers every class of the file, including at least one forgery each side accepted before', () => {
    expect(file.vectors.length).toBeGreaterThanOrEqual(15);
    expect(file.vectors.map((v) => v.id)).toEqual(
      expect.arrayContaining(['identity-key', 'order-8-r', 'mixed-order-r', 'mixed-order-key-cofactored-only', 's-plus-l']),
    );
  });

  it.each(file.vectors.map((v) => [v.id, v] as const))('%s', async (_id, v) => {
    const { record, keySet } = forged(v);
    const gateway = await gatewayVerdict(record, keySet);
    expect(gateway.verdict, 'gateway').toBe(v.record_verifier);
    expect(clientVerdict(record, keySet), 'client').toBe(v.record_verifier);
    // A refused key set says which key and why.
    if (gateway.error)
      expect(gateway.error).toMatch(/keys\[0\]\.x: the public key (is a point of small order|is not a canonical encoding)/);
  });

  it('the honest record stops verifying on both sides when one byte of it changes', async () => {
    const { record, keySet } = forged(file.vectors.find((v) => v.id === 'honest')!);
    const changed = { ...record, score: 92 };
    expect((await gatewayVerdict(changed, keySet)).verdict).toBe('BAD_SIGNATURE');
    expect(clientVerdict(changed, keySet)).toBe('BAD_SIGNATURE');
  });
});
