/**
 * The keys of the witness vectors (./vectors.gen.ts), from fixed seeds, and the signed-note lines
 * and cosignatures they make (node:crypto; Ed25519 is deterministic).
 */
import { createHash, createPrivateKey, createPublicKey, sign } from 'node:crypto';
import { treeHasher } from '#shared';

export const sha = (d: Uint8Array | string) => new Uint8Array(createHash('sha256').update(d).digest());
export const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
export const h = treeHasher(sha);
const PKCS8 = Buffer.from('302e020100300506032b657004220420', 'hex');

function key(label: string, name: string, type: number) {
  const seed = sha(`merchant-verify witness vectors ${label}`);
  const priv = createPrivateKey({ key: Buffer.concat([PKCS8, seed]), format: 'der', type: 'pkcs8' });
  const pub = new Uint8Array(Buffer.from(createPublicKey(priv).export({ format: 'jwk' }).x!, 'base64url'));
  const id = sha(Buffer.concat([Buffer.from(`${name}\n`), Buffer.of(type), pub])).slice(0, 4);
  const idHex = Buffer.from(id).toString('hex');
  return {
    name,
    seed,
    priv,
    pub,
    id,
    idHex,
    vkey: `${name}+${idHex}+${b64(Uint8Array.of(type, ...pub))}`,
    private: `PRIVATE+KEY+${name}+${idHex}+${b64(Uint8Array.of(type, ...seed))}`,
  };
}
type Key = ReturnType<typeof key>;
const line = (k: Key, sig: Uint8Array) => `\u2014 ${k.name} ${b64(Uint8Array.of(...k.id, ...sig))}\n`;
export const note = (k: Key, text: string) => `${text}\n${line(k, sign(null, Buffer.from(text), k.priv))}`;
export function cosig(k: Key, text: string, time: number) {
  const blob = Buffer.alloc(8);
  blob.writeBigUInt64BE(BigInt(time));
  return line(k, Uint8Array.of(...blob, ...sign(null, Buffer.from(`cosignature/v1\ntime ${time}\n${text}`), k.priv)));
}

export const log = key('log', 'log.example/log', 0x01);
export const w = ['w1', 'w2', 'w3', 'x1', 'x2', 'y1'].map((n) => key(n, `${n}.example/witness`, 0x04));
export const [w1, w2, w3, x1, x2, y1] = w as [Key, Key, Key, Key, Key, Key];
const mldsaPub = new Uint8Array(1312).fill(7);
const mldsaId = Buffer.from(sha(Buffer.concat([Buffer.from('pq.example/witness\n'), Buffer.of(6), mldsaPub])).slice(0, 4)).toString('hex');
export const mldsaVkey = `pq.example/witness+${mldsaId}+${b64(Uint8Array.of(6, ...mldsaPub))}`;
