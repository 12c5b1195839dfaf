import { parseArgs } from 'node:util';
import { UsageError } from '../core/errors/errors.ts';
import { PACKAGE_VERSION } from '../core/version.ts';
import { reportError } from './cli-output.ts';
import { type HelpEntry, renderHelp } from './help.ts';
import type { CliIo, CliOutput } from './io.ts';
import { closestMatch } from './suggest.ts';

/**
 * The CLI's own small command layer on node:util's parseArgs: a command declares its flags and
 * positionals once, and that declaration is the parser's table, the strictness check and the
 * help text. Anything the command did not declare is a usage error (INVALID_USAGE, exit 2) that
 * names it and suggests the closest declared name, before the command runs.
 */
export interface ArgDef {
  type: 'string' | 'boolean' | 'positional';
  description: string;
  required?: boolean;
  /**
   * This flag is another name of the flag `aliasOf` (kept so old command lines still work): its
   * value is that flag's, both at once is a usage error, and the flag stays set under its own name
   * so messages can name the one typed.
   */
  aliasOf?: string;
}
export type ArgsDef = Record<string, ArgDef>;

type ValueOf<D extends ArgDef> = D['type'] extends 'boolean' ? boolean : D extends { required: true } ? string : string | undefined;
/** What a command's `run` gets: each declared flag or positional by its name. */
export type ParsedArgs<A extends ArgsDef> = { [K in keyof A]: ValueOf<A[K]> };

export interface Command<A extends ArgsDef = ArgsDef> {
  meta: { name: string; description: string };
  args?: A;
  /** Subcommands, loaded when chosen (a group has no `run`). */
  subCommands?: Record<string, Command<any> | (() => Promise<Command<any>>)>;
  /** The command's work, writing to `io`; resolves with the exit code. */
  run?: (ctx: { args: ParsedArgs<A>; io: CliIo }) => Promise<number>;
}

/** Declares a command; only here for the types (the declaration is the value). */
export function defineCommand<const A extends ArgsDef = Record<never, ArgDef>>(command: Command<A>): Command<A> {
  return command;
}

/** Flags every command has besides its own. */
const COMMON: Record<string, { type: 'boolean'; description: string; short?: string; required?: boolean }> = {
  help: { type: 'boolean', description: 'show this help', short: 'h' },
  version: { type: 'boolean', description: 'print the version' },
};

/** Runs the command line `argv` against `root` with `io`; resolves with the exit code (a usage error: 2, with a message on stderr). */
export async function runCommandLine(root: Command<any>, argv: string[], io: CliIo): Promise<number> {
  try {
    return await dispatch(root, argv, [root.meta.name], io);
  } catch (error) {
    return reportError(io, error, false);
  }
}

async function dispatch(command: Command<any>, argv: string[], path: string[], io: CliIo): Promise<number> {
  const where = path.join(' ');
  // Messages name the subcommand (the error line already starts with "mvr:").
  const who = path.length > 1 ? `${path.slice(1).join(' ')}: ` : '';
  if (command.subCommands) {
    const [first, ...rest] = argv;
    if (first !== undefined && !first.startsWith('-')) {
      const entry = command.subCommands[first];
      if (!entry)
        throw new UsageError(`${who}unknown command "${first}"${hint(first, Object.keys(command.subCommands))}; see "${where} --help"`);
      return dispatch(typeof entry === 'function' ? await entry() : entry, rest, [...path, first], io);
    }
    if (first === '--help' || first === '-h') return written(io.stdout, await groupHelp(command, where, io.stdout, io.env));
    if (first === '--version') return written(io.stdout, `${PACKAGE_VERSION}\n`);
    if (first === undefined) {
      io.stderr.write(await groupHelp(command, where, io.stderr, io.env));
      throw new UsageError(`${who}a command is required`);
    }
    throw new UsageError(
      `${who}unknown option ${first}${hint(first, ['--help', '--version'])}; give a command first, see "${where} --help"`,
    );
  }
  const args = parseCommandLine(command, argv, path);
  if (args === 'help') return written(io.stdout, leafHelp(command, where, io));
  if (args === 'version') return written(io.stdout, `${PACKAGE_VERSION}\n`);
  return command.run ? command.run({ args: args as ParsedArgs<any>, io }) : 0;
}

/** Help and the version: written, and done (exit 0). */
function written(out: CliOutput, text: string): number {
  out.write(text);
  return 0;
}

/**
 * The command's arguments from `argv`, or 'help' / 'version' when asked for. Refuses, naming it,
 * an unknown flag, a flag without its value or a switch with one, a missing required one, and
 * an argument more than the command takes.
 */
export function parseCommandLine(command: Command<any>, argv: string[], path: string[]): Record<string, unknown> | 'help' | 'version' {
  const where = path.join(' ');
  const who = path.slice(1).join(' ');
  const defs: ArgsDef = command.args ?? {};
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = {};
  for (const [name, def] of Object.entries({ ...defs, ...COMMON }))
    if (def.type !== 'positional') options[name] = { type: def.type, ...('short' in def ? { short: def.short } : {}) };
  const positionalNames = Object.entries(defs)
    .filter(([, d]) => d.type === 'positional')
    .map(([name]) => name);
  const see = `; see "${where} --help"`;

  // First a lenient pass, only to find out what was typed: the strict pass's messages name no close match.
  const { tokens } = parseArgs({ args: argv, options, allowPositionals: true, strict: false, tokens: true });
  const given = new Set(tokens.flatMap((t) => (t.kind === 'option' ? [t.name] : [])));
  if (given.has('help')) return 'help';
  if (given.has('version')) return 'version';
  let positionals = 0;
  for (const t of tokens) {
    if (t.kind === 'positional' && ++positionals > positionalNames.length) {
      throw new UsageError(
        `${who}: unexpected argument "${t.value}"${positionalNames.length ? ` (it takes ${positionalNames.map((n) => n.toUpperCase()).join(' ')})` : ''}${see}`,
      );
    }
    if (t.kind !== 'option') continue;
    const option = options[t.name];
    if (!option)
      throw new UsageError(
        `${who}: unknown option ${t.rawName}${hint(
          t.rawName,
          Object.keys(options).map((n) => `--${n}`),
        )}${see}`,
      );
    // A value of "--port" is a forgotten value; "-5" is a value, which the option's schema judges and names.
    if (option.type === 'string' && (t.value === undefined || (!t.inlineValue && t.value.startsWith('--'))))
      throw new UsageError(`${who}: ${t.rawName} needs a value${see}`);
    if (option.type === 'boolean' && t.inlineValue) throw new UsageError(`${who}: ${t.rawName} takes no value${see}`);
  }
  let parsed;
  try {
    parsed = parseArgs({ args: joinDashValues(argv, tokens, options), allowPositionals: true, options, strict: true });
  } catch (error) {
    throw new UsageError(`${who}: ${(error as Error).message}`);
  }
  const args: Record<string, unknown> = {};
  for (const [name, def] of Object.entries(defs)) {
    const value = def.type === 'positional' ? parsed.positionals[positionalNames.indexOf(name)] : parsed.values[name];
    if (def.required && (value === undefined || value === ''))
      throw new UsageError(`${who}: ${def.type === 'positional' ? name.toUpperCase() : `--${name}`} is required${see}`);
    args[name] = def.type === 'boolean' ? value === true : value;
  }
  for (const [name, def] of Object.entries(defs)) {
    if (def.aliasOf === undefined || args[name] === undefined) continue;
    if (args[def.aliasOf] !== undefined) throw new UsageError(`${who}: --${name} is an alias of --${def.aliasOf}: give one of them${see}`);
    args[def.aliasOf] = args[name];
  }
  return args;
}

/**
 * `--flag -5` written as `--flag=-5`: the strict parser refuses a separate value that starts with
 * a dash as ambiguous, in its own words; the lenient pass has already taken it as the value.
 */
function joinDashValues(
  argv: string[],
  tokens: ReturnType<typeof parseArgs>['tokens'],
  options: Record<string, { type: string }>,
): string[] {
  const joined = new Map<number, string>();
  for (const t of tokens ?? []) {
    if (
      t.kind === 'option' &&
      options[t.name]?.type === 'string' &&
      t.rawName.startsWith('--') &&
      !t.inlineValue &&
      t.value?.startsWith('-')
    )
      joined.set(t.index, `${t.rawName}=${t.value}`);
  }
  return argv.flatMap((arg, i) => (joined.has(i) ? [joined.get(i)!] : joined.has(i - 1) ? [] : [arg]));
}

function hint(typed: string, known: string[]): string {
  const match = closestMatch(typed, known);
  return match ? ` (did you mean ${match}?)` : '';
}

function leafHelp(command: Command<any>, where: string, io: CliIo): string {
  const defs: [string, ArgDef & { short?: string }][] = Object.entries((command.args ?? {}) as ArgsDef);
  const positionals = defs
    .filter(([, d]) => d.type === 'positional')
    .map(([n, d]) => (d.required ? n.toUpperCase() : `[${n.toUpperCase()}]`));
  const all: [string, ArgDef & { short?: string }][] = [...defs, ...Object.entries(COMMON)];
  const entries: HelpEntry[] = all.map(([name, d]) => {
    if (d.type === 'positional') return { term: name.toUpperCase(), description: d.description };
    const short = d.short ? `-${d.short}, ` : '';
    const value = d.type === 'string' ? ` ${name.toUpperCase().replaceAll('-', '_')}` : '';
    return {
      term: `${short}--${name}${value}${d.required ? ' (required)' : ''}`,
      description: name === 'version' ? `${d.description} (${PACKAGE_VERSION})` : d.description,
    };
  });
  const isArgument = (e: HelpEntry) => !e.term.startsWith('-');
  const sections = [
    { title: 'Arguments', entries: entries.filter(isArgument), layout: 'stacked' as const },
    { title: 'Options', entries: entries.filter((e) => !isArgument(e)), layout: 'stacked' as const },
  ].filter((section) => section.entries.length > 0);
  return renderHelp(
    {
      usage: `${where}${positionals.length ? ` ${positionals.join(' ')}` : ''} [options]`,
      description: command.meta.description,
      sections,
    },
    io.stdout,
    io.env,
  );
}

async function groupHelp(command: Command<any>, where: string, stream: CliOutput, env: CliIo['env']): Promise<string> {
  const commands: HelpEntry[] = [];
  for (const [name, entry] of Object.entries(command.subCommands ?? {})) {
    const sub = typeof entry === 'function' ? await entry() : entry;
    commands.push({ term: name, description: sub.meta.description });
  }
  const common = Object.entries(COMMON).map(([name, d]) => ({
    term: `${d.short ? `-${d.short}, ` : ''}--${name}`,
    description: d.description,
  }));
  return renderHelp(
    {
      usage: `${where} <command> [options]`,
      description: command.meta.description,
      sections: [
        { title: 'Commands', entries: commands, layout: 'columns' },
        { title: 'Options', entries: common, layout: 'columns' },
      ],
      footer: `"${where} <command> --help" shows a command's options.`,
    },
    stream,
    env,
  );
}
