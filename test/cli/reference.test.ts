/**
 * docs/cli.md is the CLI reference `npm run docs:cli` writes from the CLI itself (cli/reference.ts):
 * the file must be exactly what the generator writes now, so a new command, option, variable or
 * exit code fails here until the docs are written again. And the generator leaves nothing out: every
 * command's help as `mvr ... --help` prints it, every variable of the option table, every exit code.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OPTIONS } from '../../cli/options.ts';
import { cliReference } from '../../cli/reference.ts';
import { ERROR_REGISTRY } from '../../core/errors/errors.ts';
import { runCli } from '../support/cli.ts';
import { ROOT } from '../support/project.ts';

const reference = await cliReference();

describe('docs/cli.md', () => {
  it('is what `npm run docs:cli` writes (run it after changing a command, an option or an exit code)', async () => {
    expect(await readFile(join(ROOT, 'docs', 'cli.md'), 'utf8')).toBe(reference);
  });

  it("holds every command's help as `--help` prints it, every variable and every exit code", async () => {
    for (const path of [[], ['keygen'], ['apikey'], ['apikey', 'create'], ['serve'], ['log', 'check'], ['verify'], ['witness']]) {
      const r = await runCli([...path, '--help']);
      expect(r.code).toBe(0);
      expect(reference, `mvr ${path.join(' ')} --help`).toContain(`## \`${['mvr', ...path].join(' ')}\`\n`);
      expect(reference, `mvr ${path.join(' ')} --help`).toContain(r.stdout.trimEnd());
    }
    for (const o of Object.values(OPTIONS)) expect(reference).toMatch(new RegExp(`^\\| \`${o.env}\` \\|`, 'm'));
    for (const [code, { exit }] of Object.entries(ERROR_REGISTRY))
      expect(reference).toMatch(new RegExp(`^\\| ${exit} \\|.*\`${code}\``, 'm'));
  });
});
