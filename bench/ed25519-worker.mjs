// One thread's share of the raw Ed25519 measurement (plain JS: worker threads need no loader).
import { generateKeyPairSync, sign, verify } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const message = Buffer.alloc(650, 0x61); // about the size of a record's canonical JSON
const half = workerData.seconds * 500;
let signs = 0,
  t0 = performance.now(),
  sig = sign(null, message, privateKey);
while (performance.now() - t0 < half) {
  for (let i = 0; i < 100; i++) sig = sign(null, message, privateKey);
  signs += 100;
}
const signMs = performance.now() - t0;
let verifies = 0;
t0 = performance.now();
while (performance.now() - t0 < half) {
  for (let i = 0; i < 100; i++) verify(null, message, publicKey, sig);
  verifies += 100;
}
parentPort.postMessage({ signs, verifies, signMs, verifyMs: performance.now() - t0 });
