import { z } from 'zod';
import { parseCheckpoint, parseNote, parseTlogProof, TLOG_PROOF_HEADER } from '#shared';

// The text formats of the transparency log, as patterns: what `/v1/proof`, `/log/checkpoint` and
// the log's verifier key answer. The verifier parses them (`parseTlogProof`, `parseCheckpoint`);
// these describe them in the OpenAPI document and let a test check real answers.

const base64 = '[A-Za-z0-9+/]+=*';
const hash = '[A-Za-z0-9+/]{43}=';
/** A tree size or entry index as the verifier's parsers take it: decimal, no leading zero, at most 16 digits. */
const decimal = '(?:0|[1-9][0-9]{0,15})';
/** c2sp.org/tlog-checkpoint in a c2sp.org/signed-note: origin, size, root, extensions, a blank line, signatures. */
const checkpoint = `[^\\n]+\\n${decimal}\\n${hash}\\n(?:[^\\n]+\\n)*\\n(?:\\u2014 \\S+ ${base64}\\n)+`;

/** `GET /log/checkpoint`: the log's latest checkpoint, a signed note. */
export const checkpointTextSchema = z
  .string()
  .regex(new RegExp(`^${checkpoint}$`))
  .refine(parsesAsCheckpoint, 'not a checkpoint the verifier can parse')
  .describe("c2sp.org/tlog-checkpoint as a c2sp.org/signed-note: origin, tree size, root hash, then the log's signature lines")
  .meta({ title: 'Checkpoint' });

/** `GET /v1/proof`: c2sp.org/tlog-proof@v1 of a record, against the checkpoint its build signed. */
export const logProofTextSchema = z
  .string()
  .regex(
    new RegExp(`^${TLOG_PROOF_HEADER.replace(/[.]/g, '\\.')}\\n(?:extra ${base64}\\n)?index ${decimal}\\n(?:${hash}\\n)*\\n${checkpoint}$`),
  )
  .refine(parsesAsProof, 'not a tlog-proof the verifier can parse')
  .describe(
    "c2sp.org/tlog-proof@v1: `extra` carries the record's 32-byte salt (the entry is SHA-256(salt || record bytes)), then the entry index, the RFC 6962 inclusion proof and the signed checkpoint of the record's build",
  )
  .meta({ title: 'Log proof' });

/** `GET /.well-known/merchant-verify-log.vkey`: the log's verifier key in signed-note form. */
export const logVerifierKeySchema = z
  .string()
  .regex(new RegExp(`^[^+\\s]+\\+[0-9a-f]{8}\\+${base64}\\n?$`))
  .describe('<name>+<key ID>+<base64(0x01 || Ed25519 public key)>, one line')
  .meta({ title: 'Log verifier key' });

// The patterns describe the formats in the OpenAPI document; a pattern cannot bound a number (a
// size or index over 2^53 - 1) nor decode base64, so the schemas also run the verifier's parsers:
// a text passes exactly when the verifier could read it (its signatures are the verifier's to check).

function parsesAsCheckpoint(note: string): boolean {
  try {
    parseCheckpoint(parseNote(note).text);
    return true;
  } catch {
    return false;
  }
}

function parsesAsProof(text: string): boolean {
  try {
    return parsesAsCheckpoint(parseTlogProof(text).checkpoint);
  } catch {
    return false;
  }
}
