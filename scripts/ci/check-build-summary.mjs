// The monthly rebuild's checks of `mvr build --json`'s summary, run in the project folder:
// `node scripts/ci/check-build-summary.mjs` with SUMMARY, PUBLISH_KEYS, RETIRE_KEY_IDS, MIN_RECORDS,
// MVR_ISSUER and GITHUB_STEP_SUMMARY in the environment. One ::error:: line per failed check, a
// step summary, and exit 1 when any failed.
import { appendFileSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';

const env = process.env;
const read = (file) => JSON.parse(readFileSync(file, 'utf8'));
const s = read(env.SUMMARY);
const keySet = read(s.key_set_file);
const manifest = read(join(s.build_dir, 'manifest.json'));
const carried = read(env.PUBLISH_KEYS).keys.map((k) => k.kid);
const retired = (env.RETIRE_KEY_IDS ?? '').split(/[\s,]+/).filter(Boolean);
const min = Math.max(1, Number(env.MIN_RECORDS || 1));
const problems = [];
const check = (ok, message) => {
  if (!ok) problems.push(message);
};
check(s.ok === true, 'the build did not report ok');
check(s.signed === true && typeof s.key_id === 'string' && s.key_id !== '', 'the records are UNSIGNED');
check(Number.isInteger(s.records) && s.records >= min, `${s.records} records, fewer than the minimum ${min} (vars.MVR_MIN_RECORDS)`);
check(s.published_key_ids.includes(s.key_id), `the signing key ${s.key_id} is not in the key set`);
for (const kid of carried) check(s.published_key_ids.includes(kid), `earlier key ${kid} dropped out of the key set`);
for (const kid of retired)
  check(!s.published_key_ids.includes(kid), `key ${kid} was to be retired but is still listed (the active key cannot be retired)`);
const listed = keySet.keys.map((k) => k.kid).sort();
check(
  JSON.stringify(listed) === JSON.stringify([...s.published_key_ids].sort()),
  'the key set file does not list the keys the summary names',
);
check(realpathSync('records/current') === realpathSync(s.build_dir), 'records/current is not this build');
check(manifest.records === s.records && manifest.key_id === s.key_id, 'manifest.json disagrees with the summary');
// Every record, then the build statement last (its entry ends the checkpoint the build publishes).
check(s.log !== null && s.log.to - s.log.from === s.records + 1, 'the records were not all appended to the transparency log');
check(s.log === null || s.log.statement === s.log.to - 1, "the build statement is not the log's last entry");
if (env.MVR_ISSUER)
  check(manifest.issuer === env.MVR_ISSUER, `the records name issuer ${manifest.issuer}, not vars.MVR_ISSUER (${env.MVR_ISSUER})`);
for (const p of problems) console.log(`::error::${p}`);
const counts = (o) =>
  Object.entries(o)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ') || 'none';
appendFileSync(
  env.GITHUB_STEP_SUMMARY,
  [
    `### Monthly rebuild ${s.build_id}: ${problems.length ? 'FAILED checks' : 'checks passed'}`,
    '',
    `- records: ${s.records} (by status: ${counts(s.by_status)}; by tier: ${counts(s.by_tier)})`,
    `- issuer: ${manifest.issuer}; issued_at: ${s.issued_at}`,
    `- signed with: ${s.key_id}; key set lists: ${s.published_key_ids.join(', ')}`,
    `- log: ${s.log ? `${s.log.origin}, entries ${s.log.from} to ${s.log.to}` : 'not appended'}`,
    ...problems.map((p) => `- **${p}**`),
    '',
  ].join('\n'),
);
process.exit(problems.length ? 1 : 0);
