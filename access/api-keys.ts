import { hash, randomBytes } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ConfigError, UsageError } from '../core/errors.ts';
import { type LockSettings, withFileLock } from '../core/file-lock.ts';
import { fileVersion } from '../core/files.ts';
import { commitGeneration, type Generational } from '../core/generation.ts';

/**
 * What a key may do beyond the ordinary key-gated routes: `mirror` may also fetch whole builds
 * (`GET /v1/mirror...`), which an ordinary key may not.
 */
export const API_KEY_SCOPES = ['mirror'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/**
 * API keys: `mvr_<id>_<secret>`. Only SHA-256 of the whole key is stored, in its own JSON file
 * (default keys/api-keys.json), so a leaked file grants nothing. The id is public: it is what
 * logs and `mvr apikey list` show, and what `revoke` takes.
 */
export interface ApiKeyEntry {
  id: string;
  label: string;
  sha256: string;
  created: string;
  revoked: string | null;
  /** Its scopes; absent on an ordinary key and on every key made before scopes, which are ordinary. */
  scopes?: ApiKeyScope[];
}

/** The scopes of an entry as stored: none when it names none; a name this version does not know grants nothing. */
export function scopesOf(entry: Pick<ApiKeyEntry, 'scopes'>): ApiKeyScope[] {
  const named: unknown = entry.scopes;
  return Array.isArray(named) ? API_KEY_SCOPES.filter((s) => named.includes(s)) : [];
}

/** The scope a command line names (`--scope`), or a usage error naming the flag and the scopes there are. */
export function parseScope(text: string): ApiKeyScope {
  const scope = API_KEY_SCOPES.find((s) => s === text);
  if (!scope)
    throw new UsageError(
      `--scope: unknown scope "${text}" (the scopes are: ${API_KEY_SCOPES.join(', ')}; without --scope a key is ordinary)`,
    );
  return scope;
}

/** The file as stored: its entries, and its generation (core/generation.ts; absent in files made before it, read as 0). */
export interface ApiKeyFile extends Generational {
  keys: ApiKeyEntry[];
}

/** `mvr_<id>_<secret>`: the id is group 1. */
export const KEY_FORMAT = /^mvr_([a-z0-9]{10})_([A-Za-z0-9_-]{43})$/;

async function readKeyFile(file: string): Promise<ApiKeyFile> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { keys: [] };
    throw error;
  }
  let parsed: ApiKeyFile;
  try {
    parsed = JSON.parse(text) as ApiKeyFile;
  } catch (error) {
    throw new ConfigError(`${file}: not an API key file (${(error as Error).message})`);
  }
  if (!Array.isArray(parsed?.keys)) throw new ConfigError(`${file}: not an API key file (no "keys" array)`);
  return parsed;
}

/**
 * Where API key entries live: a JSON file (the embedded default), or Redis shared by every
 * gateway (access/api-keys-redis.ts). Either holds hashes only.
 */
export interface ApiKeyTable {
  /** Where it is, for messages. */
  readonly name: string;
  /** Cheap; changes whenever a key is added or revoked. */
  version(): Promise<string>;
  entries(): Promise<ApiKeyEntry[]>;
  /** One entry by its id (null when there is none), where that costs less than reading them all (Redis); absent for a file, read whole. */
  entry?(id: string): Promise<ApiKeyEntry | null>;
  add(entry: ApiKeyEntry): Promise<void>;
  /** Marks a key revoked (once; a second revocation keeps the first time). Throws ConfigError for an unknown id. */
  revoke(id: string, at: string): Promise<ApiKeyEntry>;
}

/**
 * Changes the API key file (default keys/api-keys.json, mode 0600): reads it, lets `edit` change
 * it, and writes it whole, holding the file's lock (core/file-lock.ts), so `create`, `revoke` and
 * `mvr dev` run side by side in any number of processes lose no key and undo no revocation. The
 * write is the next generation of the one read (core/generation.ts): a writer that lost the lock
 * while it worked (stalled past the stale limit) is refused LOCK_LOST rather than undo what was
 * changed meanwhile. Readers (the gateway) need no lock, as a rename is seen whole or not at all.
 */
export async function changeApiKeyFile<T>(file: string, edit: (data: ApiKeyFile) => T | Promise<T>, lock: LockSettings = {}): Promise<T> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  return withFileLock(
    file,
    async () => {
      const data = await readKeyFile(file);
      const base = data.generation ?? 0;
      const result = await edit(data);
      await commitGeneration(
        file,
        base,
        data,
        (d) => `${JSON.stringify(d, null, 2)}\n`,
        () => readKeyFile(file),
      );
      return result;
    },
    lock,
  );
}

/** The API key file as a key table; `lock` sets how its lock is waited for and judged abandoned (tests shorten it). */
export function apiKeyFile(file: string, lock: LockSettings = {}): ApiKeyTable {
  const change = <T>(edit: (data: ApiKeyFile) => T) => changeApiKeyFile(file, edit, lock);
  return {
    name: file,
    version: () => fileVersion(file),
    entries: async () => (await readKeyFile(file)).keys,
    add: async (entry) => {
      await change((data) => data.keys.push(entry));
    },
    revoke: (id, at) =>
      change((data) => {
        const entry = data.keys.find((k) => k.id === id);
        if (!entry) throw new ConfigError(`no API key with id "${id}" in ${file}`);
        entry.revoked ??= at;
        return entry;
      }),
  };
}

export const tableOf = (where: string | ApiKeyTable) => (typeof where === 'string' ? apiKeyFile(where) : where);

/**
 * Creates a key in a key file or table, ordinary or with `scopes` (stored beside its hash only when
 * it has any); returns the key text (shown once, never stored) and its entry.
 */
export async function createApiKey(
  where: string | ApiKeyTable,
  label: string,
  { scopes = [], now = new Date() }: { scopes?: readonly ApiKeyScope[]; now?: Date } = {},
): Promise<{ key: string; entry: ApiKeyEntry }> {
  if (label.trim() === '') throw new ConfigError('--label must not be empty');
  const id = randomBytes(8).toString('hex').slice(0, 10);
  const key = `mvr_${id}_${randomBytes(32).toString('base64url')}`;
  const entry: ApiKeyEntry = { id, label: label.trim(), sha256: hash('sha256', key), created: now.toISOString(), revoked: null };
  if (scopes.length > 0) entry.scopes = [...new Set(scopes)];
  await tableOf(where).add(entry);
  return { key, entry };
}

/** Lists keys (id, label, created, revoked, scopes); never the hashes' preimages, which are not stored. */
export async function listApiKeys(where: string | ApiKeyTable): Promise<ApiKeyEntry[]> {
  return (await tableOf(where).entries()).sort((a, b) => a.created.localeCompare(b.created) || a.id.localeCompare(b.id));
}

/** Revokes a key by its id, or by the whole key (which holds its id). Every running gateway stops accepting it within a second. */
export function revokeApiKey(where: string | ApiKeyTable, idOrKey: string, now = new Date()): Promise<ApiKeyEntry> {
  return tableOf(where).revoke(keyIdOf(idOrKey), now.toISOString());
}

/** The key id in an id or a whole key; anything else is refused without being repeated, as it may be a mistyped secret. */
function keyIdOf(text: string): string {
  const id = KEY_FORMAT.exec(text)?.[1] ?? (/^[a-z0-9]{10}$/.test(text) ? text : undefined);
  if (id === undefined)
    throw new ConfigError(
      'the ID given is neither a key id (10 lowercase letters and digits, see "mvr apikey list") nor a whole API key; it is not shown, as it may hold a secret',
    );
  return id;
}

/** `text` with the secret part of anything shaped like an API key hidden: for messages that may quote what a user typed. */
export function hideApiKeys(text: string): string {
  return text.replace(/\b(mvr_[A-Za-z0-9]*_)[A-Za-z0-9_-]+/g, '$1<secret hidden>');
}
