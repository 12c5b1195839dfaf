/**
 * Writes the Ed25519 edge-case vectors (decision 0027), reproducibly:
 *
 *   npx tsx test/vectors/ed25519-vectors.gen.ts        # writes ed25519-edge-cases.json
 *
 * The cases are ./ed25519-cases.ts's, over the canonical bytes of RECORD.
 * test/core/ed25519-edge-vectors.test.ts checks them against both primitives on whatever Node line
 * runs it, and that this file is what the cases make.
 */
import { writeFileSync } from 'node:fs';
import { edgeCases } from './ed25519-cases.ts';
import { M, RECORD } from './ed25519-construct.ts';

writeFileSync(
  new URL('./ed25519-edge-cases.json', import.meta.url),
  `${JSON.stringify({ description: 'Ed25519 edge cases over one record (decision 0027). Hex byte strings. message is the RFC 8785 bytes of record; node_crypto (by Node.js line) and noble_strict are the verdicts of the two primitives as this project calls them; record_verifier what both record verifiers answer for the record signed so, its key set listing public_key (INVALID_KEY_SET: the key set is refused). See test/vectors/ed25519.md.', record: RECORD, vectors: edgeCases(M) }, null, 1)}\n`,
);
