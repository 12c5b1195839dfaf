import { ERROR_REGISTRY, type ErrorCode } from '../core/errors/registry.ts';
import { type Command, runCommandLine } from './command.ts';
import { mvrCommand } from './mvr.ts';
import { OPTIONS } from './options.ts';

// docs/cli.md, the CLI's reference, is generated here from what the CLI itself knows: each command's
// `--help` (its flags, their variables and defaults, from the option table), the option table and the
// error registry's exit codes. `npm run docs:cli` writes it; a test fails when the file differs, so a
// new command, option or exit code cannot be left out of the docs.

/** Where each command is explained by topic, beyond its help. */
const TOPICS: Record<string, string> = {
  keygen: '[keys and rotation](keys-and-rotation.md)',
  build: '[building](building.md), [audit input](audit-input.md)',
  apikey: '[operating: API keys](operating.md#api-keys-and-the-cdn)',
  serve: '[operating](operating.md), [the HTTP API](http-api.md)',
  dev: "[the README's quick start](../README.md#quick-start), [development](development.md#npm-start)",
  publish: '[building: publishing](building.md#publishing-to-a-bucket)',
  pull: '[building: publishing](building.md#publishing-to-a-bucket)',
  mirror: '[mirrors](mirrors.md)',
  changes: '[building: kept builds](building.md#kept-builds-history-and-the-change-feed)',
  log: '[the transparency log](verifying.md#the-transparency-log), [witnesses](witnesses.md)',
  verify: '[verifying](verifying.md), [the verdict](verdict.md)',
  mcp: '[MCP](mcp.md)',
  witness: '[witnesses](witnesses.md#running-a-witness-mvr-witness)',
};

const INTRO = `The bin is \`mvr\`: in a clone, \`npx mvr ...\` (the package's own bin); installed, \`mvr ...\`.

- An unknown command or flag, a missing value or argument is a usage error (\`INVALID_USAGE\`, exit 2) naming it and
  the closest match. \`--help\` and \`--version\` work on every command; help fits 80 columns and is coloured only on a
  terminal (\`NO_COLOR\`, \`FORCE_COLOR\`).
- Every option is a flag, an environment variable (empty counts as unset) and a default, resolved in that order by one
  schema (\`cli/config.ts\`), which names the flag of a bad value (\`--rate-limit -5\` too). A command reads only its own
  options, and nothing below the CLI reads the environment.
- \`build\`, \`publish\` and \`pull\` show progress on stderr: redrawn in place on a terminal, else a line (a JSON object
  with \`--json\`) every 5 s (\`MVR_PROGRESS_MS\`) and a done line; \`build\` names each phase as it begins and, while
  signing, the time left at the rate measured so far.
- Ctrl-C or SIGTERM stops a build before it goes live: exit 130 (\`INTERRUPTED\`), staging removed, the live build
  named and untouched. \`serve\` stops gracefully on SIGTERM or SIGINT: requests in flight finish and every log line is
  written.
- With \`--json\`, an error before any result is \`{"ok": false, "code", "message"}\`.
- Exit codes: \`0\` success, \`1\` an unexpected failure, else the exit code of the error's code ([below](#exit-codes)).

Variables that are not options: \`SOURCE_DATE_EPOCH\` (\`mvr build\`'s \`issued_at\`, which \`--now\` overrides), the
standard \`AWS_*\` variables for \`s3://\` ([operating](operating.md#environment-variables)), \`NO_COLOR\`, \`FORCE_COLOR\`
and \`TERM\`.`;

/** The help of `mvr ...path`, exactly as `mvr ...path --help` prints it into a pipe. */
async function helpOf(path: string[]): Promise<string> {
  let text = '';
  const out = { write: (s: string) => (text += s), isTTY: false };
  await runCommandLine(mvrCommand, [...path, '--help'], { env: {}, stdout: out, stderr: out });
  return text.trimEnd();
}

/** Every command path of the tree under `command`, a group before its subcommands. */
async function commandPaths(command: Command<any>, path: string[] = []): Promise<string[][]> {
  const paths = [path];
  for (const [name, entry] of Object.entries(command.subCommands ?? {}))
    paths.push(...(await commandPaths(typeof entry === 'function' ? await entry() : entry, [...path, name])));
  return paths;
}

/** A Markdown table cell: its pipes and angle brackets escaped, so a description can neither end the cell nor read as HTML. */
const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('<', '&lt;');

/** Every environment variable of the option table, with its flag, default and meaning. */
function variablesTable(): string[] {
  const rows = Object.values(OPTIONS).map((o) => {
    const flag = o.flag === null ? '(none)' : `\`--${o.flag}\``;
    const fallback = o.fallback === undefined ? 'none' : `\`${o.fallback}\``;
    return `| \`${o.env}\` | ${flag} | ${fallback} | ${cell(o.description)} |`;
  });
  return ['| variable | flag | default | meaning |', '|---|---|---|---|', ...rows];
}

/** Every exit code, with the error codes that exit with it, from the error registry. */
function exitCodesTable(): string[] {
  const byExit = new Map<number, ErrorCode[]>();
  for (const code of Object.keys(ERROR_REGISTRY) as ErrorCode[]) {
    const exit = ERROR_REGISTRY[code].exit;
    byExit.set(exit, [...(byExit.get(exit) ?? []), code]);
  }
  const rows = [...byExit.entries()]
    .sort(([a], [b]) => a - b)
    .map(([exit, codes]) => `| ${exit} | ${codes.map((c) => `\`${c}\` (${cell(ERROR_REGISTRY[c].title)})`).join(', ')} |`);
  return ['| exit | codes |', '|---:|---|', ...rows];
}

/**
 * The text of docs/cli.md: the CLI's conventions, then every command's help as `--help` prints
 * it, the environment variables of the option table and the exit codes of the error registry.
 */
export async function cliReference(): Promise<string> {
  const paths = await commandPaths(mvrCommand);
  const out = [
    '# The `mvr` command line',
    '',
    '<!-- Generated by `npm run docs:cli` from the commands, the option table (cli/options.ts) and the error registry; edit those, not this file. -->',
    '',
    INTRO,
    '',
  ];
  for (const path of paths) {
    const name = ['mvr', ...path].join(' ');
    out.push(`## \`${name}\``, '');
    const topic = path.length === 1 ? TOPICS[path[0]!] : undefined;
    if (topic) out.push(`More: ${topic}.`, '');
    out.push('```text', await helpOf(path), '```', '');
  }
  out.push('## Environment variables', '', ...variablesTable(), '');
  out.push('## Exit codes', '', '`0` success; `1` an unexpected failure, or one of these codes; the others as listed:', '');
  out.push(...exitCodesTable(), '');
  return out.join('\n');
}
