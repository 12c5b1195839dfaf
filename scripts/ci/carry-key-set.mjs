// The monthly rebuild's key set carry-over: `node scripts/ci/carry-key-set.mjs PUBLISHED OUT`.
// Copies the published JWK Set minus the keys named in RETIRE_KEY_IDS (comma or space separated) to
// OUT, for `mvr build --publish-keys`, with its key endorsements (a gateway that trusts an earlier key trusts
// a later one through them); refuses anything that is not a public JWK Set.
import { readFileSync, writeFileSync } from 'node:fs';

/** Ends the step with one ::error:: line, as the workflow's other checks do (no stack trace to read). */
function refuse(message) {
  console.log(`::error::${message}`);
  process.exit(1);
}

const [from, to] = process.argv.slice(2);
const set = JSON.parse(readFileSync(from, 'utf8'));
if (!set || !Array.isArray(set.keys)) refuse(`${from}: not a JWK Set`);
if (set.keys.some((k) => k && typeof k === 'object' && 'd' in k)) refuse(`${from}: holds a private key`);
const retire = new Set((process.env.RETIRE_KEY_IDS ?? '').split(/[\s,]+/).filter(Boolean));
const keys = set.keys.filter((k) => !retire.has(k.kid));
for (const kid of retire)
  if (!set.keys.some((k) => k.kid === kid)) console.log(`::warning::retire_key_ids: ${kid} is not in the published key set`);
writeFileSync(to, `${JSON.stringify(Array.isArray(set.endorsements) ? { keys, endorsements: set.endorsements } : { keys })}\n`);
console.log(`carried over: ${keys.map((k) => k.kid).join(', ') || 'none'}${retire.size ? `; retired: ${[...retire].join(', ')}` : ''}`);
