// `npm run docs:cli`: writes docs/cli.md, the CLI reference generated from the compiled CLI
// (cli/reference.ts), so the docs say what `mvr --help` says. test/cli/reference.test.ts fails
// when the file differs from what this would write.
import { writeFileSync } from 'node:fs';
import { cliReference } from '../dist/cli/reference.js';

writeFileSync(new URL('../docs/cli.md', import.meta.url), await cliReference());
