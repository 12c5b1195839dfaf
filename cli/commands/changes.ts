import { defineCommand } from '../command.ts';
import type { Verdict } from '../../core/history-schema.ts';
import { runAction } from '../cli-output.ts';
import { commandOptions, s3ConfigFor, schemaUrlOf } from '../config.ts';

const options = commandOptions('records', 'public', 'issuer', 'schemaUrl');

const verdict = (v: Verdict | null) => (v ? `${v.status} ${v.tier ?? '-'} ${v.score ?? '-'}` : '(none)');

export default defineCommand({
  meta: { name: 'changes', description: 'What changed (status, tier, score; newly audited; dropped) from a kept build to the live one, as the build computed it' },
  args: {
    ...options.describe({ records: 'records: a folder or s3://BUCKET/PREFIX' }),
    since: { type: 'string', description: 'the id of a kept build (see GET /v1/builds, or records/kept.json)', required: true },
    json: { type: 'boolean', description: 'one JSON object per change per line: {"domain","before","after"}' },
  },
  run: ({ args }) =>
    runAction(Boolean(args.json), async () => {
      const config = options.resolve(args, process.env);
      const [{ openRecordsService }, { BuildHistory }] = await Promise.all([import('../../service/records.ts'), import('../../service/history.ts')]);
      const records = openRecordsService({ records: config.records, s3: s3ConfigFor(config.records, process.env), publicDir: config.public, issuer: config.issuer, schemaUrl: schemaUrlOf(config), cacheBytes: 1024 * 1024});
      const history = new BuildHistory(records);
      let count = 0;
      let to = '';
      try {
        // Which build is live (and, for a bucket, the key set published with it).
        await records.refresh();
        for (let cursor: string | undefined; ; ) {
          const page = await history.changes(args.since, cursor);
          to = page.to;
          for (const c of page.changes) {
            process.stdout.write(args.json ? `${JSON.stringify(c)}\n` : `${c.domain}  ${verdict(c.before)} -> ${verdict(c.after)}\n`);
          }
          count += page.changes.length;
          if (page.next === null) break;
          cursor = page.next;
        }
      } finally {
        await records.close();
      }
      process.stderr.write(`${count.toLocaleString('en-US')} change${count === 1 ? '' : 's'} from ${args.since} to ${to}\n`);
    }),
});
