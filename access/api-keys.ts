import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ConfigError, StoreUnavailableError, UnauthorizedError } from '@merchant-verify/verifier/errors';
import { fileVersion, writeAtomic } from '../core/files.ts';

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
}

interface ApiKeyFile {
  keys: ApiKeyEntry[];
}

const KEY_FORMAT = /^mvr_([a-z0-9]{10})_([A-Za-z0-9_-]{43})$/;

async function readKeyFile(file: string): Promise<ApiKeyFile> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { keys: [] };
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as ApiKeyFile;
    if (!Array.isArray(parsed.keys)) throw new Error('no "keys" array');
    return parsed;
  } catch (error) {
    throw new ConfigError(`${file}: not an API key file (${(error as Error).message})`);
  }
}

/**
 * Where API key entries live: a JSON file (the embedded default), or Redis shared by every
 * gateway (service/api-keys-redis.ts). Either holds hashes only.
 */
export interface ApiKeyTable {
  /** Where it is, for messages. */
  readonly name: string;
  /** Cheap; changes whenever a key is added or revoked. */
  version(): Promise<string>;
  entries(): Promise<ApiKeyEntry[]>;
  add(entry: ApiKeyEntry): Promise<void>;
  /** Marks a key revoked (once; a second revocation keeps the first time). Throws ConfigError for an unknown id. */
  revoke(id: string, at: string): Promise<ApiKeyEntry>;
}

/** The API key file (default keys/api-keys.json), written whole by rename, mode 0600. */
export function apiKeyFile(file: string): ApiKeyTable {
  const write = async (data: ApiKeyFile) => {
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    await writeAtomic(file, `${JSON.stringify(data, null, 2)}\n`, 0o600);
  };
  return {
    name: file,
    version: () => fileVersion(file),
    entries: async () => (await readKeyFile(file)).keys,
    add: async (entry) => {
      const data = await readKeyFile(file);
      data.keys.push(entry);
      await write(data);
    },
    revoke: async (id, at) => {
      const data = await readKeyFile(file);
      const entry = data.keys.find((k) => k.id === id);
      if (!entry) throw new ConfigError(`no API key with id "${id}" in ${file}`);
      entry.revoked ??= at;
      await write(data);
      return entry;
    },
  };
}

const tableOf = (where: string | ApiKeyTable) => (typeof where === 'string' ? apiKeyFile(where) : where);

/** Creates a key in a key file or table; returns the key text (shown once, never stored) and its entry. */
export async function createApiKey(where: string | ApiKeyTable, label: string, now = new Date()): Promise<{ key: string; entry: ApiKeyEntry }> {
  if (label.trim() === '') throw new ConfigError('--label must not be empty');
  const id = randomBytes(8).toString('hex').slice(0, 10);
  const key = `mvr_${id}_${randomBytes(32).toString('base64url')}`;
  const entry: ApiKeyEntry = { id, label: label.trim(), sha256: hash('sha256', key), created: now.toISOString(), revoked: null };
  await tableOf(where).add(entry);
  return { key, entry };
}

/** Lists keys (id, label, created, revoked); never the hashes' preimages, which are not stored. */
export async function listApiKeys(where: string | ApiKeyTable): Promise<ApiKeyEntry[]> {
  return (await tableOf(where).entries()).sort((a, b) => a.created.localeCompare(b.created) || a.id.localeCompare(b.id));
}

/** Revokes a key by id. Every running gateway stops accepting it within its refresh interval. */
export function revokeApiKey(where: string | ApiKeyTable, id: string, now = new Date()): Promise<ApiKeyEntry> {
  return tableOf(where).revoke(id, now.toISOString());
}

/**
 * The three refusals, made once: the same three answers every time, and a flood of requests with
 * bad keys then costs no new error (and no stack trace captured) per request, so refusing costs
 * about what serving does. Their stacks say nothing and are never logged.
 */
const REFUSED = {
  noKey: new UnauthorizedError('an API key is required: send "Authorization: Bearer <API_KEY>"', false),
  notBearer: new UnauthorizedError('the Authorization header must use the Bearer scheme', false),
  invalidKey: new UnauthorizedError('the API key is not valid or has been revoked', true),
} as const;

/**
 * How long the gateway keeps answering from the keys it last read while their table cannot be
 * read (Redis down, an unreadable file): known keys keep working, unknown keys are refused.
 * Past this, keyed requests are STORE_UNAVAILABLE (503): a revocation the gateway cannot see
 * is never honoured late by more than this.
 */
export const API_KEYS_STALE_MS = 60_000;

/**
 * The gateway's view of the API keys, a snapshot in memory reloaded when the table's version
 * changes (checked every `refreshMs`), so a request never waits on the table, and `mvr apikey
 * revoke` reaches a running gateway within `refreshMs` plus one load.
 */
export class ApiKeyStore {
  private byId = new Map<string, { digest: Buffer; revoked: boolean }>();
  // Tokens accepted since the last load, and their key id: a caller's key is hashed once, not on every request (a
  // twentieth of a hot record's cost). Memory only; emptied by every reload, so a revocation lands with it; only the
  // exact accepted token of a key enters (the hash is of the whole token), so junk cannot fill it.
  private accepted = new Map<string, string>();
  private version = '';
  /** When the snapshot was last confirmed current (on `now`), and why it could not be since. */
  private confirmedAt = -Infinity;
  private lastError: string | null = 'not loaded yet';
  private readonly table: ApiKeyTable;
  private timer: NodeJS.Timeout | null = null;
  /** The load of the file running now, and the one queued after it (see refresh()). */
  private loading: Promise<void> | null = null;
  private again: Promise<void> | null = null;
  private readonly dummy = hash('sha256', 'dummy', 'buffer');
  /** Since start: loads that found the keys changed and read them again, and checks that failed (for metrics). */
  private reloads = 0;
  private reloadFailures = 0;

  constructor(
    where: string | ApiKeyTable,
    private readonly refreshMs = 250,
    private readonly staleMs = API_KEYS_STALE_MS,
    /** The clock the stale bound is measured on (ms; monotonic by default): tests pass their own. */
    private readonly now: () => number = () => performance.now(),
  ) {
    this.table = tableOf(where);
  }

  /** Keeps the keys current from now on, and loads them now (rejecting when that first load fails; the timer goes on trying). */
  async start(): Promise<void> {
    this.timer = setInterval(() => void this.refresh().catch(() => undefined), this.refreshMs);
    this.timer.unref();
    await this.refresh();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Number of live (not revoked) keys. */
  get liveKeys(): number {
    return [...this.byId.values()].filter((k) => !k.revoked).length;
  }

  /**
   * Reloads the file if its identity, size or mtime changed. One load at a time: a call made
   * while a load is running waits for it and then looks again, so when it resolves every change
   * made before it was called is applied, and a slow load that read an older file can never
   * finish after (and undo) a newer one, such as a revocation.
   */
  refresh(): Promise<void> {
    if (!this.loading) {
      this.loading = this.load().finally(() => (this.loading = null));
      return this.loading;
    }
    this.again ??= this.loading.then(() => this.rerun(), () => this.rerun());
    return this.again;
  }

  private rerun(): Promise<void> {
    this.again = null;
    return this.refresh();
  }

  /** For health: where the keys come from, and whether they are current. */
  state(): { ok: boolean; source: string; error: string | null } {
    return { ok: this.lastError === null, source: this.table.name, error: this.lastError };
  }

  /** For metrics: reloads and failed checks since start, and the live keys now. */
  counts(): { reloads: number; reloadFailures: number; liveKeys: number } {
    return { reloads: this.reloads, reloadFailures: this.reloadFailures, liveKeys: this.liveKeys };
  }

  private async load(): Promise<void> {
    try {
      const sig = await this.table.version();
      if (sig !== this.version) {
        const keys = await this.table.entries();
        this.byId = new Map(keys.map((k) => [k.id, { digest: Buffer.from(String(k.sha256), 'hex'), revoked: k.revoked !== null }]));
        this.accepted = new Map();
        this.version = sig;
        this.reloads++;
      }
      this.confirmedAt = this.now();
      this.lastError = null;
    } catch (error) {
      this.reloadFailures++;
      this.lastError = `API keys ${this.table.name} unreadable: ${(error as Error).message}`;
      throw error;
    }
  }

  /**
   * Checks an `Authorization` header. The scheme is case-insensitive (RFC 7235); the key is
   * hashed and compared in constant time. Returns the key id, or throws {@link UnauthorizedError}.
   */
  check(header: string | undefined): string {
    if (!header) throw REFUSED.noKey;
    const m = /^bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
    if (!m) throw REFUSED.notBearer;
    const token = m[1]!;
    if (this.now() - this.confirmedAt > this.staleMs) {
      throw new StoreUnavailableError(`the API keys could not be read for over ${this.staleMs / 1000} s: ${this.lastError}`);
    }
    const known = this.accepted.get(token);
    if (known !== undefined) return known;
    const parts = KEY_FORMAT.exec(token);
    const entry = parts ? this.byId.get(parts[1]!) : undefined;
    // Compared even when the id is unknown (against a dummy), so timing does not tell whether an id exists.
    const stored = entry?.digest ?? this.dummy;
    const presented = hash('sha256', token, 'buffer');
    const match = stored.length === presented.length && timingSafeEqual(stored, presented) && entry !== undefined;
    if (!match || entry.revoked) throw REFUSED.invalidKey;
    this.accepted.set(token, parts![1]!);
    return parts![1]!;
  }
}
