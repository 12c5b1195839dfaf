// The CPU time of one raw Ed25519 signature and one verification (node:crypto), in a process of its
// own: its CPU time (user + system) over the operations, which the machine's other work moves far
// less than it moves a rate. Prints JSON: microseconds of CPU a sign, a verify, and a pair.
import { generateKeyPairSync, sign, verify } from 'node:crypto';

const count = Number(process.argv[2] ?? 5000);
const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const message = Buffer.alloc(650, 0x61); // about the size of a record's canonical JSON, as in ./ed25519-worker.mjs
let sig = sign(null, message, privateKey);
for (let i = 0; i < 200; i++) verify(null, message, publicKey, sign(null, message, privateKey)); // warm-up
const cpu = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};
let t0 = cpu();
for (let i = 0; i < count; i++) sig = sign(null, message, privateKey);
const signUs = (cpu() - t0) / count;
t0 = cpu();
for (let i = 0; i < count; i++) verify(null, message, publicKey, sig);
const verifyUs = (cpu() - t0) / count;
process.stdout.write(`${JSON.stringify({ signUs, verifyUs, pairUs: signUs + verifyUs })}\n`);
