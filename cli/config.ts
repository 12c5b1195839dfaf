import { resolve } from 'node:path';
import { formatTimestamp, parseTimestamp } from '@merchant-verify/verifier/internal/issuer';
import { z } from 'zod';
import { ConfigError } from '../core/errors.ts';
import { defaultSchemaUrl } from '../core/record.ts';
import { mirrorFolderOf } from '../storage/mirror-folder.ts';
import { type StoreSettings, storeSettingsFromEnv } from '../storage/url.ts';
import { OPTIONS } from './options.ts';

/**
 * Configuration resolves once, here: explicit flag, then environment variable, then default; then
 * one zod schema validates and converts it, and the result is passed down. Nothing below the
 * CLI reads the environment: a run gets it in its `io` (cli/io.ts).
 */
export type Env = Record<string, string | undefined>;

export { OPTIONS };

export type OptionName = keyof typeof OPTIONS;

/** The one configuration schema: every option, validated and converted. */
export const configSchema = z.object(
  Object.fromEntries(Object.entries(OPTIONS).map(([name, o]) => [name, o.schema])) as { [K in OptionName]: (typeof OPTIONS)[K]['schema'] },
);

/** Some options, resolved and validated. */
export type Config<N extends OptionName = OptionName> = Pick<z.output<typeof configSchema>, N>;

/**
 * The options of one command: its flags (`args`, or `describe` with this command's own wording
 * of some), and `resolve`, which reads exactly those options
 * (flag, then environment, then default) and validates them with {@link configSchema}. Only a
 * command's own options are read, so a variable meant for another command (`PORT` for the
 * gateway) never stops this one. An invalid value is a ConfigError naming the flag, the variable
 * and the value.
 */
export function commandOptions<const N extends OptionName>(...names: N[]) {
  // Typed by Config<N>: zod's pick cannot follow a generic list of names.
  const schema = configSchema.pick(Object.fromEntries(names.map((name) => [name, true])) as never);
  return {
    args: flags(names),
    /** The flags, with this command's own description of some (an option several commands share means something narrower in each). */
    describe(own: Partial<Record<N, string>>) {
      return flags(names, own);
    },
    resolve(args: Record<string, unknown>, env: Env): Config<N> {
      const raw: Record<string, string | undefined> = {};
      for (const name of names) {
        const o: (typeof OPTIONS)[OptionName] = OPTIONS[name];
        const flag = o.flag === null ? undefined : args[o.flag];
        raw[name] = [typeof flag === 'string' ? flag : undefined, env[o.env], o.fallback].find((v) => v !== undefined && v !== '');
      }
      const parsed = schema.safeParse(raw);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        const name = issue.path[0] as N;
        const o: (typeof OPTIONS)[OptionName] = OPTIONS[name];
        // A value that may hold a secret (a password in a URL, a key) is never repeated.
        const value = 'secret' in o ? '(value not shown)' : `"${raw[name]}"`;
        throw new ConfigError(`${o.flag ? `--${o.flag} / ` : ''}${o.env} ${value}: ${issue.message}`);
      }
      return parsed.data as unknown as Config<N>;
    },
  };
}

/**
 * The one way a command reaches a store: where it is (`url`, given by `how.flag`), how (the public
 * folder, a timeout, bulk transfers), and what its backend reads from the environment (the
 * standard AWS variables for s3://), checked now.
 */
export function storeSettingsOf(url: string, env: Env, how: Omit<StoreSettings, 'url' | 's3'> = {}): StoreSettings {
  return storeSettingsFromEnv(url, env, how);
}

/** The records store of `serve`, `mcp` and `changes`: `--records`, with `--public` for the key set and the log. */
export function recordsStoreOf(config: Config<'records' | 'public'>, env: Env, timeoutMs?: number): StoreSettings {
  // A mirror (`mvr mirror --to`) keeps its builds' public files itself: its own key set and log, never --public's.
  const publicDir = mirrorFolderOf(config.records)?.publicDir ?? config.public;
  return storeSettingsOf(config.records, env, { publicDir, timeoutMs });
}

/** The issuer a gateway answers under: `--issuer` / MVR_ISSUER; unset, a mirror folder's builds' issuer; else the default. */
export function issuerOf(config: Config<'records' | 'issuer'>, args: { issuer?: unknown }, env: Env): string {
  const given = typeof args.issuer === 'string' || Boolean(env.MVR_ISSUER);
  return (given ? null : mirrorFolderOf(config.records)?.issuer) ?? config.issuer;
}

/** The API key file: `--api-keys` / `MVR_API_KEYS_FILE`, else `<keys>/api-keys.json`. */
export function apiKeysFileOf(config: Config<'keys' | 'apiKeys'>): string {
  return config.apiKeys ?? resolve(config.keys, 'api-keys.json');
}

/** The record schema URL: `--schema-url` / `MVR_SCHEMA_URL`, else the issuer's default. */
export function schemaUrlOf(config: Config<'issuer' | 'schemaUrl'>): string {
  return config.schemaUrl ?? defaultSchemaUrl(config.issuer);
}

/** The command-line definitions of options' flags, with their variable and default in the help text. */
function flags(
  names: readonly OptionName[],
  own: Partial<Record<OptionName, string>> = {},
): Record<string, { type: 'string'; description: string }> {
  const out: Record<string, { type: 'string'; description: string }> = {};
  for (const name of names) {
    const o: (typeof OPTIONS)[OptionName] = OPTIONS[name];
    if (o.flag === null) continue;
    out[o.flag] = {
      type: 'string',
      description: `${own[name] ?? o.description} (env ${o.env}${o.fallback === undefined ? '' : `, default ${o.fallback}`})`,
    };
  }
  return out;
}

/**
 * The build's `issued_at`: `--now` (ISO 8601), else `SOURCE_DATE_EPOCH` (seconds, the
 * reproducible-builds convention), else the clock. A time later than the clock (beyond
 * {@link FUTURE_TOLERANCE_MS}) is refused: it would date the build, and the audits it lets
 * through, in the future. The tolerance is the audit rule's: loaded here, with the work that dates a
 * build, so no command's start loads the audit schema and the domain parser behind it.
 */
export async function resolveNow(flag: string | undefined, env: Env, clock = Date.now): Promise<number> {
  const { t, named } = chosenNow(flag, env, clock);
  const { FUTURE_TOLERANCE_MS } = await import('../core/audit.ts');
  const machine = clock();
  if (t > machine + FUTURE_TOLERANCE_MS) {
    throw new ConfigError(
      `${named}: ${formatTimestamp(t)} is later than this machine's clock (${formatTimestamp(machine)}); a build cannot be dated in the future`,
    );
  }
  return t;
}

function chosenNow(flag: string | undefined, env: Env, clock: () => number): { t: number; named: string } {
  if (flag) {
    const t = parseTimestamp(flag);
    if (t === null) throw new ConfigError(`--now "${flag}": must be an ISO 8601 timestamp with Z or an offset`);
    return { t, named: `--now "${flag}"` };
  }
  const sde = env.SOURCE_DATE_EPOCH;
  if (sde !== undefined && sde !== '') {
    if (!/^\d{1,12}$/.test(sde)) throw new ConfigError(`SOURCE_DATE_EPOCH "${sde}": must be whole seconds since 1970`);
    return { t: Number(sde) * 1000, named: `SOURCE_DATE_EPOCH "${sde}"` };
  }
  return { t: clock(), named: 'the clock' };
}
