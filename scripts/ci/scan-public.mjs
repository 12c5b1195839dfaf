// The monthly rebuild's structural scan of the staged public/ folder:
// `node scripts/ci/scan-public.mjs PUBLIC_DIR`. Every JSON file parses and has no member "d" at any
// depth, and the key set holds public Ed25519 members only; one ::error:: line per problem, exit 1.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const problems = [];
const walk = (value, path, file) => {
  if (Array.isArray(value)) for (const [i, v] of value.entries()) walk(v, `${path}[${i}]`, file);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === 'd') problems.push(`${file}: member "d" at ${path}`);
      walk(v, `${path}.${k}`, file);
    }
  }
};
const root = process.argv[2];
for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith('.json')) continue;
  const file = join(entry.parentPath ?? entry.path, entry.name);
  let value;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    problems.push(`${file}: not JSON (${e.message})`);
    continue;
  }
  walk(value, '$', file);
}
const keySet = JSON.parse(readFileSync(join(root, '.well-known/merchant-verify-keys.json'), 'utf8'));
const allowed = new Set(['kty', 'crv', 'x', 'kid', 'use', 'alg']);
for (const k of keySet.keys) for (const m of Object.keys(k)) if (!allowed.has(m)) problems.push(`key set: key ${k.kid} has member "${m}"`);
for (const p of problems) console.log(`::error::${p}`);
process.exit(problems.length ? 1 : 0);
