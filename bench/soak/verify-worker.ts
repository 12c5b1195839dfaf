import { parentPort } from 'node:worker_threads';
import { verifyRecord } from '@merchant-verify/verifier';
import type { VerifyReply, VerifyRequest } from './verify-pool.ts';

/** Runs verifyRecord (the portable verifier, @noble/ed25519) off the client's event loop. */
const keySets = new Map<number, unknown>();

parentPort!.on('message', (m: VerifyRequest) => {
  if (m.type === 'key-set') {
    keySets.set(m.version, m.keySet);
    for (const v of keySets.keys()) if (v < m.version - 1) keySets.delete(v);
    return;
  }
  let reply: VerifyReply;
  try {
    const r = verifyRecord(JSON.parse(m.body), keySets.get(m.version), { domain: m.domain });
    reply = r.valid ? { id: m.id, valid: true, keyId: r.keyId } : { id: m.id, valid: false, code: r.code, message: r.message };
  } catch (error) {
    // parseKeySet throws on a key set it refuses (a private key in it, not a JWK Set...).
    reply = { id: m.id, valid: false, code: 'KEY_SET_REFUSED', message: (error as Error).message };
  }
  parentPort!.postMessage(reply);
});
