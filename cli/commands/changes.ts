import type { Verdict } from '../../core/schemas/history.ts';
import { runAction } from '../cli-output.ts';
import { defineCommand } from '../command.ts';
import { commandOptions, recordsStoreOf, schemaUrlOf } from '../config.ts';
import { TRUST_OPTIONS, trustOf, unsignedArg } from '../trust-options.ts';

const options = commandOptions('records', 'public', 'issuer', 'schemaUrl', ...TRUST_OPTIONS);

const verdict = (v: Verdict | null) => (v ? `${v.status} ${v.tier ?? '-'} ${v.score ?? '-'}` : '(none)');

export default defineCommand({
  meta: {
    name: 'changes',
    description: 'What changed (status, tier, score; newly audited; dropped) from a kept build to the live one, as the build computed it',
  },
  args: {
    ...options.describe({ records: 'records: a folder or s3://BUCKET/PREFIX' }),
    ...unsignedArg,
    since: { type: 'string', description: 'the id of a kept build (see GET /v1/builds, or records/kept.json)', required: true },
    json: { type: 'boolean', description: 'one JSON object per change per line: {"domain","before","after"}' },
  },
  run: ({ args, io }) =>
    runAction(io, Boolean(args.json), async () => {
      const config = options.resolve(args, io.env);
      const { openRecordsStack } = await import('../../service/records-stack.ts');
      // Which build is live (and, for a bucket, the key set published with it), read once.
      const store = recordsStoreOf(config, io.env);
      const { history, close } = await openRecordsStack({
        store,
        issuer: config.issuer,
        schemaUrl: schemaUrlOf(config),
        cacheBytes: 1024 * 1024,
        trust: await trustOf(config, args, store),
      });
      let count = 0;
      let to = '';
      try {
        for (let cursor: string | undefined; ; ) {
          const page = await history.changes(args.since, cursor);
          to = page.to;
          for (const c of page.changes) {
            io.stdout.write(args.json ? `${JSON.stringify(c)}\n` : `${c.domain}  ${verdict(c.before)} -> ${verdict(c.after)}\n`);
          }
          count += page.changes.length;
          if (page.next === null) break;
          cursor = page.next;
        }
      } finally {
        await close();
      }
      io.stderr.write(`${count.toLocaleString('en-US')} change${count === 1 ? '' : 's'} from ${args.since} to ${to}\n`);
    }),
});
