/**
 * `npm run s3:local [-- --port 4569 --dir .s3-local --bucket mvr-local]`: a bucket on one's own
 * machine, to try `mvr publish` and `mvr serve --records s3://...` before a real bucket
 * (docs/local-bucket.md). It is the S3-compatible server the tests publish to (s3rver behind a
 * proxy that checks AWS Signature V4 as S3 does), so what works here was signed as for S3. Prints
 * the AWS variables to export on stdout (everything else on stderr) and serves until Ctrl-C;
 * the objects stay in the folder for the next start.
 */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { UsageError } from '../core/errors.ts';
import { startS3 } from '../test/support/s3-server.ts';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '4569' },
    dir: { type: 'string', default: '.s3-local' },
    bucket: { type: 'string', default: 'mvr-local' },
  },
});
const port = Number(values.port);
if (!Number.isInteger(port) || port < 1 || port > 65535) throw new UsageError(`--port ${values.port}: not a port number`);
// npm runs a script in the project root; a relative folder is taken from where the command was typed.
const directory = resolve(process.env.INIT_CWD ?? process.cwd(), values.dir);
mkdirSync(directory, { recursive: true });

const s3 = await startS3([values.bucket], { directory, port });
for (const [name, value] of Object.entries(s3.env)) process.stdout.write(`export ${name}=${value}\n`);
process.stderr.write(`s3:local: bucket s3://${values.bucket} at ${s3.endpoint}, objects in ${directory}; Ctrl-C stops\n`);

for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    void s3.close().then(() => process.exit(0));
  });
