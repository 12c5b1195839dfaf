/**
 * The verifier package's public surface is deliberate: its `exports` map names one public entry
 * point and two internal ones (the issuer's own building blocks, for this repository's service,
 * with no compatibility promise), and each exports exactly the names below. Something new made
 * public (a module, a helper) fails here until it is added on purpose, with the package README.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/project.ts';

const manifest = JSON.parse(readFileSync(join(ROOT, 'packages/verifier/package.json'), 'utf8')) as { exports: Record<string, unknown> };

const SURFACE: Record<string, string[]> = {
  '@merchant-verify/verifier': [
    'BUNDLE_SCHEMA_SUFFIX',
    'bucketBitsFor',
    'bucketHex',
    'bucketOf',
    'recordMatchesEntry',
    'CanonicalizationError',
    'InvalidArgumentError',
    'FetchFailedError',
    'InvalidKeySetError',
    'InvalidVerifierKeyError',
    'KEY_SET_PATH',
    'LOG_KEY_PATH',
    'MvrError',
    'NoteError',
    'PolicyError',
    'VERIFIER_ERROR_CODES',
    'ageOf',
    'gatewaySource',
    'isNeverAudited',
    'parseKeySet',
    'parsePolicy',
    'stalenessOf',
    'trustedKeySet',
    'verdictOf',
    'verifyAbsence',
    'verifyAnswer',
    'verifyBundle',
    'verifyCompactAnswer',
    'verifyLogProof',
    'verifyOnline',
    'verifyOnlineCompact',
    'verifyOnlinePrivately',
    'verifyPrefixAnswer',
    'verifyRecord',
    'verifyWitnessedCheckpoint',
  ],
  '@merchant-verify/verifier/internal/tlog': [
    'COSIGNATURE_ED25519',
    'NoteError',
    'STATEMENT_ENTRY_PREFIX',
    'TLOG_PROOF_HEADER',
    'consistencyProof',
    'cosignatureKeyId',
    'cosignatureLine',
    'cosignedMessage',
    'decodeBase64',
    'encodeBase64',
    'equalBytes',
    'foldPerfect',
    'formatCheckpoint',
    'formatTlogProof',
    'formatVerifierKey',
    'inclusionProof',
    'isKeyName',
    'noteKeyId',
    'openNote',
    'parseCheckpoint',
    'parseCosignature',
    'parseNote',
    'parseTlogProof',
    'parseVerifierKey',
    'quorumMet',
    'rangeHash',
    'signatureLine',
    'statementEntry',
    'treeHasher',
    'verifyConsistency',
    'verifyInclusion',
  ],
  '@merchant-verify/verifier/internal/issuer': [
    'BUNDLE_SCHEMA_SUFFIX',
    'COMPACT_ANSWER_LIMIT',
    'bucketBitsFor',
    'bucketHex',
    'bucketOf',
    'bucketOfHex',
    'compactAnswerBytes',
    'encodeCompactAnswer',
    'DomainMap',
    'ED25519_L',
    'ENTRY_SIZE',
    'HASH_LEAF_SIZE',
    'KEY_ENDORSEMENT_TYPE',
    'PACKS_MAX',
    'PACK_RECORDS_MIN',
    'STATEMENT_SCHEMA_SUFFIX',
    'TRUST_LIMITS',
    'addOneMonth',
    'buildStatement',
    'canonicalBytes',
    'canonicalJson',
    'canonicalMembers',
    'createAbsenceVerifier',
    'createEd25519Check',
    'createRecordVerifier',
    'createTrustedKeySet',
    'daysInMonth',
    'decodeBase64url',
    'decodeMapEntry',
    'domainHash',
    'encodeBase64url',
    'encodeMapEntry',
    'entryMismatch',
    'findKey',
    'formatTimestamp',
    'hasLoneSurrogate',
    'hexPrefix',
    'joinMembers',
    'keySetEndorsements',
    'lookupAnswerBytes',
    'nobleEd25519Verify',
    'packCount',
    'packIndexBytes',
    'packIndexProblem',
    'packPath',
    'packsHeadOf',
    'paddedPart',
    'parseTimestamp',
    'prefixLengthFor',
    'publicKeyProblem',
    'recordPlace',
    'recordsPerPackFor',
    'signatureProblem',
    'signatureText',
    'splitPack',
    'statementLeafSize',
    'statementText',
    'verifyBuildStatement',
  ],
};

describe('the public surface of @merchant-verify/verifier', () => {
  it('exports names one public entry point, two internal ones and package.json, no wildcard', () => {
    expect(Object.keys(manifest.exports)).toEqual(['.', './internal/tlog', './internal/issuer', './package.json']);
  });

  it('the former /tlog and /issuer entry points are gone: what they held is internal now', async () => {
    await expect(import('@merchant-verify/verifier/' + 'tlog')).rejects.toThrow();
    await expect(import('@merchant-verify/verifier/' + 'issuer')).rejects.toThrow();
  });

  it.each(Object.entries(SURFACE))('%s exports exactly its listed names', async (specifier, names) => {
    const entry = (await import(specifier)) as Record<string, unknown>;
    expect(Object.keys(entry).sort()).toEqual([...names].sort());
  });

  it('an internal module is not reachable by a subpath', async () => {
    await expect(import('@merchant-verify/verifier/' + 'errors')).rejects.toThrow();
    await expect(import('@merchant-verify/verifier/' + 'tlog/note')).rejects.toThrow();
  });
});
