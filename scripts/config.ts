import { resolve } from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../core/errors.ts';
import { defaultSchemaUrl, SCHEMA_SUFFIX } from '../core/record.ts';
import { parseTimestamp } from '../core/time.ts';

/**
 * Options resolve once, here: explicit flag, then environment variable, then default; then
 * they are validated and passed down. Nothing below the CLI reads `process.env`.
 */
export type Env = Record<string, string | undefined>;

/** citty definitions of the folder flags shared by every command that touches them. */
export const folderArgs = {
  audits: { type: 'string', description: 'audits folder (env MVR_AUDITS_DIR, default ./audits)' },
  records: { type: 'string', description: 'records folder (env MVR_RECORDS_DIR, default ./records); for serve also an http(s) origin URL' },
  public: { type: 'string', description: 'public folder served by a CDN (env MVR_PUBLIC_DIR, default ./public)' },
  keys: { type: 'string', description: 'keys folder (env MVR_KEYS_DIR, default ./keys)' },
} as const;

export const issuerArgs = {
  issuer: { type: 'string', description: 'issuer domain written in records (env MVR_ISSUER, default merchant-verify.example)' },
  'schema-url': { type: 'string', description: 'record schema URL, ends in /verification/v1 (env MVR_SCHEMA_URL)' },
} as const;

export interface Folders {
  auditsDir: string;
  recordsDir: string;
  publicDir: string;
  keysDir: string;
}

/** Resolves the four folders to absolute paths. */
export function resolveFolders(args: Partial<Record<keyof typeof folderArgs, string | undefined>>, env: Env): Folders {
  const pick = (flag: string | undefined, name: string, fallback: string) => resolve(flag || env[name] || fallback);
  return {
    auditsDir: pick(args.audits, 'MVR_AUDITS_DIR', 'audits'),
    recordsDir: pick(args.records, 'MVR_RECORDS_DIR', 'records'),
    publicDir: pick(args.public, 'MVR_PUBLIC_DIR', 'public'),
    keysDir: pick(args.keys, 'MVR_KEYS_DIR', 'keys'),
  };
}

const hostname = z
  .string()
  .regex(/^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/, 'must be a lowercase hostname such as verify.example.com');

/** Resolves and validates the issuer and the schema URL. */
export function resolveIssuer(args: { issuer?: string | undefined; 'schema-url'?: string | undefined }, env: Env): { issuer: string; schemaUrl: string } {
  const issuer = args.issuer || env.MVR_ISSUER || 'merchant-verify.example';
  const checked = hostname.safeParse(issuer);
  if (!checked.success) throw new ConfigError(`--issuer / MVR_ISSUER "${issuer}": ${checked.error.issues[0]!.message}`);
  const schemaUrl = args['schema-url'] || env.MVR_SCHEMA_URL || defaultSchemaUrl(issuer);
  if (!/^https?:\/\/\S+$/.test(schemaUrl) || !URL.canParse(schemaUrl) || !schemaUrl.endsWith(SCHEMA_SUFFIX)) {
    throw new ConfigError(`--schema-url / MVR_SCHEMA_URL "${schemaUrl}": must be a URL ending in ${SCHEMA_SUFFIX}`);
  }
  return { issuer, schemaUrl };
}

/**
 * The build's `issued_at`: `--now` (ISO 8601), else `SOURCE_DATE_EPOCH` (seconds, the
 * reproducible-builds convention), else the clock.
 */
export function resolveNow(flag: string | undefined, env: Env, clock = Date.now): number {
  if (flag) {
    const t = parseTimestamp(flag);
    if (t === null) throw new ConfigError(`--now "${flag}": must be an ISO 8601 timestamp with Z or an offset`);
    return t;
  }
  const sde = env.SOURCE_DATE_EPOCH;
  if (sde !== undefined && sde !== '') {
    if (!/^\d{1,12}$/.test(sde)) throw new ConfigError(`SOURCE_DATE_EPOCH "${sde}": must be whole seconds since 1970`);
    return Number(sde) * 1000;
  }
  return clock();
}

/** Parses a whole number >= 0, naming the flag on error. */
export function nonNegativeInt(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  if (!/^\d+$/.test(value)) throw new ConfigError(`${name} "${value}": must be a whole number (0 turns it off)`);
  return Number(value);
}

/** Parses a positive integer flag, naming it on error. */
export function positiveInt(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new ConfigError(`${name} "${value}": must be a positive whole number`);
  return Number(value);
}

export const apiKeysArgs = {
  keys: folderArgs.keys,
  'api-keys': { type: 'string', description: 'API key file (env MVR_API_KEYS_FILE, default <keys>/api-keys.json)' },
} as const;

/** The API key file: `--api-keys`, `MVR_API_KEYS_FILE`, or `<keys>/api-keys.json`. */
export function resolveApiKeysFile(args: { keys?: string | undefined; 'api-keys'?: string | undefined }, env: Env): string {
  const explicit = args['api-keys'] || env.MVR_API_KEYS_FILE;
  if (explicit) return resolve(explicit);
  return resolve(resolveFolders({ keys: args.keys }, env).keysDir, 'api-keys.json');
}

export const serveArgs = {
  records: folderArgs.records,
  public: folderArgs.public,
  ...apiKeysArgs,
  ...issuerArgs,
  port: { type: 'string', description: 'port (env PORT, default 8787; 0 picks a free one)' },
  host: { type: 'string', description: 'interface (env HOST, default 127.0.0.1)' },
  'cache-mb': { type: 'string', description: 'memory for verified records, MB (env MVR_CACHE_MB, default 64)' },
  'sign-unverified': { type: 'boolean', description: 'sign never-audited answers with the active signing key (opt-in; the gateway then holds a private key)' },
  quiet: { type: 'boolean', description: 'no access log (warnings and errors are still logged)' },
  workers: { type: 'string', description: 'gateway processes sharing the port (env MVR_WORKERS, default 1)' },
  'fast-lane': {
    type: 'boolean',
    default: true,
    description: 'answer GET /v1/verify on the socket, before node:http (same answers, faster)',
    negativeDescription: 'serve every request through node:http (the same answers; for comparison, or if a Node.js release lacks the parser binding the lane uses)',
  },
  'rate-limit': { type: 'string', description: 'requests per minute per API key, 0 = off (env MVR_RATE_LIMIT, default 6000)' },
  'unauth-rate-limit': { type: 'string', description: 'requests per minute per client address without a valid key, 0 = off (env MVR_UNAUTH_RATE_LIMIT, default 600)' },
} as const;

/** Port: `--port`, `PORT`, default 8787; 0..65535. */
export function resolvePort(flag: string | undefined, env: Env): number {
  const value = flag ?? env.PORT ?? '8787';
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) throw new ConfigError(`--port / PORT "${value}": must be 0..65535`);
  return Number(value);
}
