import { z } from 'zod';
import { TLOG_PROOF_HEADER } from '@merchant-verify/verifier/tlog/proof-text';

// The text formats of the transparency log, as patterns: what `/v1/proof`, `/log/checkpoint` and
// the log's verifier key answer. The verifier parses them (`parseTlogProof`, `parseCheckpoint`);
// these describe them in the OpenAPI document and let a test check real answers.

const base64 = '[A-Za-z0-9+/]+=*';
const hash = '[A-Za-z0-9+/]{43}=';
/** c2sp.org/tlog-checkpoint in a c2sp.org/signed-note: origin, size, root, extensions, a blank line, signatures. */
const checkpoint = `[^\\n]+\\n\\d+\\n${hash}\\n(?:[^\\n]+\\n)*\\n(?:\\u2014 \\S+ ${base64}\\n)+`;

/** `GET /log/checkpoint`: the log's latest checkpoint, a signed note. */
export const checkpointTextSchema = z
  .string()
  .regex(new RegExp(`^${checkpoint}$`))
  .describe("c2sp.org/tlog-checkpoint as a c2sp.org/signed-note: origin, tree size, root hash, then the log's signature lines")
  .meta({ title: 'Checkpoint' });

/** `GET /v1/proof`: c2sp.org/tlog-proof@v1 of a record, against the checkpoint its build signed. */
export const logProofTextSchema = z
  .string()
  .regex(new RegExp(`^${TLOG_PROOF_HEADER.replace(/[.]/g, '\\.')}\\n(?:extra ${base64}\\n)?index \\d+\\n(?:${hash}\\n)*\\n${checkpoint}$`))
  .describe("c2sp.org/tlog-proof@v1: `extra` carries the record's 32-byte salt (the entry is SHA-256(salt || record bytes)), then the entry index, the RFC 6962 inclusion proof and the signed checkpoint of the record's build")
  .meta({ title: 'Log proof' });

/** `GET /.well-known/merchant-verify-log.vkey`: the log's verifier key in signed-note form. */
export const logVerifierKeySchema = z
  .string()
  .regex(new RegExp(`^[^+\\s]+\\+[0-9a-f]{8}\\+${base64}\\n?$`))
  .describe('<name>+<key ID>+<base64(0x01 || Ed25519 public key)>, one line')
  .meta({ title: 'Log verifier key' });
