/**
 * The build statement's log entry and statement_proof against their vectors
 * (test/vectors/statement, written by vectors.gen.ts apart from the code under test): the entry
 * and the statement file's text rebuilt from the statement, and absence proofs checked with the
 * log's key by the portable verifier and by the gateway's primitives (node:crypto) alike.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type AbsenceResult, type KeySet, type LogTrust, parseKeySet, verifyAbsence } from '@merchant-verify/verifier';
import { describe, expect, it } from 'vitest';
import { type AbsenceProof, createAbsenceVerifier, STATEMENT_ENTRY_PREFIX, statementEntry, statementText } from '#shared';
import { nodeEd25519Verify } from '../../core/crypto/ed25519.ts';
import { h, sha256, toHex } from '../support/tlog.ts';

const vectors = JSON.parse(readFileSync(join(import.meta.dirname, '../vectors/statement/statement-proofs.json'), 'utf8')) as {
  prefix: string;
  statement: AbsenceProof['statement'];
  statement_text: string;
  entry: string;
  leaf: string;
  log_vkey: string;
  key_set: KeySet;
  domain: string;
  valid: { index: number; tree_size: number; absence_proof: AbsenceProof };
  refused: { name: string; code: string; reason: string | null; absence_proof: unknown }[];
};
const log = { vkey: vectors.log_vkey };
const verifyNode = createAbsenceVerifier(sha256, nodeEd25519Verify);
/** The portable verifier, and the same verdict from node:crypto's Ed25519. */
const both = (proof: unknown, options: { log?: LogTrust } = {}): AbsenceResult => {
  const result = verifyAbsence(proof, vectors.domain, vectors.key_set, options);
  expect(verifyNode(proof, vectors.domain, parseKeySet(vectors.key_set), options.log)).toEqual(result);
  return result;
};

describe('the build statement entry', () => {
  it('is SHA-256 of the prefix and the statement file, whose text is the canonical JSON of the statement and a newline', () => {
    expect(STATEMENT_ENTRY_PREFIX).toBe(vectors.prefix);
    expect(statementText(vectors.statement)).toBe(vectors.statement_text);
    // The statement as an answer carries it (parsed from JSON, members in any order) gives the same text.
    const reordered = Object.fromEntries(Object.entries(vectors.statement).reverse()) as AbsenceProof['statement'];
    expect(statementText(reordered)).toBe(vectors.statement_text);
    const entry = statementEntry(sha256, new TextEncoder().encode(vectors.statement_text));
    expect(toHex(entry)).toBe(vectors.entry);
    expect(toHex(h.leaf(entry))).toBe(vectors.leaf);
  });
});

describe('statement_proof vectors', () => {
  it('holds with the log key: the statement is the entry at its index under the signed checkpoint', () => {
    expect(both(vectors.valid.absence_proof, { log })).toMatchObject({
      valid: true,
      statementLog: { index: vectors.valid.index, checkpoint: { size: vectors.valid.tree_size, origin: 'merchant-verify.example/log' } },
    });
    // The origin given is the key's name; another origin expected is refused.
    expect(both(vectors.valid.absence_proof, { log: { ...log, origin: 'merchant-verify.example/log' } }).valid).toBe(true);
    expect(
      verifyAbsence(vectors.valid.absence_proof, vectors.domain, vectors.key_set, { log: { ...log, origin: 'x.example/log' } }),
    ).toMatchObject({
      valid: false,
      code: 'STATEMENT_NOT_LOGGED',
    });
  });

  it.each(vectors.refused)('refused with the log key: $name', (v) => {
    const result = both(v.absence_proof, { log });
    expect(result).toMatchObject({ valid: false, code: v.code });
    // The log proof's own code is named in the message.
    if (v.reason && !result.valid) expect(result.message).toContain(v.reason);
  });

  it('without the log key nothing changes: statement_proof is not looked at', () => {
    for (const v of vectors.refused.filter((r) => r.code === 'STATEMENT_NOT_LOGGED')) {
      const result = both(v.absence_proof);
      expect(result, v.name).toMatchObject({ valid: true });
      expect(result, v.name).not.toHaveProperty('statementLog');
    }
  });
});
