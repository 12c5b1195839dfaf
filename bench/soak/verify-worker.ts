import { parentPort } from 'node:worker_threads';
import { parsePolicy, type TlogPolicy, verdictOf, verifyBundle, verifyCompactAnswer, verifyRecord } from '@merchant-verify/verifier';
import type { VerifyReply, VerifyRequest } from './verify-pool.ts';

/**
 * Runs the portable verifier (@noble/ed25519) off the client's event loop: verifyRecord for a
 * plain lookup, verifyBundle for a bundle, verifyCompactAnswer for a private lookup (against the
 * statement read before it); the last two with the log's key and the witnesses' policy, as a
 * client holding them checks. A private lookup's `answer` is the proven entry with its statement's
 * `issued_at`, which names the build.
 */
const keySets = new Map<number, unknown>();
let trust: { log: { vkey: string }; policy: TlogPolicy } | null = null;

function verify(m: Extract<VerifyRequest, { type: 'verify' }>): Omit<VerifyReply, 'id'> {
  const keySet = keySets.get(m.version);
  const answer: unknown = JSON.parse(m.body);
  if (m.route === 'verify') {
    const r = verifyRecord(answer, keySet, { domain: m.domain });
    return r.valid ? { code: null, message: null, answer: null } : { code: r.code, message: r.message, answer: null };
  }
  if (!trust) throw new Error('no log key and policy given to the verify worker');
  if (m.route === 'bundle') {
    const v = verifyBundle({ bundle: answer, domain: m.domain, keySet, ...trust });
    const { code, message } = verdictOf(v);
    return { code, message, answer: v.answer };
  }
  // A private lookup's body: the statement read first and the compact answer's bytes, in base64.
  const { head, bytes } = answer as { head: string; bytes: string };
  const { statement, statement_proof } = JSON.parse(head) as { statement: { issued_at?: unknown }; statement_proof?: string };
  const v = verifyCompactAnswer({
    domain: m.domain,
    answer: new Uint8Array(Buffer.from(bytes, 'base64')),
    statement,
    ...(statement_proof === undefined ? {} : { statementProof: statement_proof }),
    keySet,
    ...trust,
  });
  return { code: v.code, message: v.message, answer: v.entry && { ...v.entry, issued_at: statement.issued_at } };
}

parentPort!.on('message', (m: VerifyRequest) => {
  if (m.type === 'trust') {
    trust = { log: { vkey: m.vkey }, policy: parsePolicy(m.policy) };
    return;
  }
  if (m.type === 'key-set') {
    keySets.set(m.version, m.keySet);
    for (const v of keySets.keys()) if (v < m.version - 1) keySets.delete(v);
    return;
  }
  let reply: VerifyReply;
  try {
    reply = { id: m.id, ...verify(m) };
  } catch (error) {
    // parseKeySet throws on a key set it refuses (a private key in it, not a JWK Set...).
    reply = { id: m.id, code: 'KEY_SET_REFUSED', message: (error as Error).message, answer: null };
  }
  parentPort!.postMessage(reply);
});
