import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdir, readFile, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ConfigError, UnauthorizedError } from '../core/errors.ts';
import { writeAtomic } from './files.ts';

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

/** Creates a key; returns the key text (shown once, never stored) and its entry. */
export async function createApiKey(file: string, label: string, now = new Date()): Promise<{ key: string; entry: ApiKeyEntry }> {
  if (label.trim() === '') throw new ConfigError('--label must not be empty');
  const data = await readKeyFile(file);
  const id = randomBytes(8).toString('hex').slice(0, 10);
  const key = `mvr_${id}_${randomBytes(32).toString('base64url')}`;
  const entry: ApiKeyEntry = { id, label: label.trim(), sha256: hash('sha256', key), created: now.toISOString(), revoked: null };
  data.keys.push(entry);
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  await writeAtomic(file, `${JSON.stringify(data, null, 2)}\n`, 0o600);
  return { key, entry };
}

/** Lists keys (id, label, created, revoked); never the hashes' preimages, which are not stored. */
export async function listApiKeys(file: string): Promise<ApiKeyEntry[]> {
  return (await readKeyFile(file)).keys;
}

/** Revokes a key by id. A running gateway stops accepting it within its refresh interval. */
export async function revokeApiKey(file: string, id: string, now = new Date()): Promise<ApiKeyEntry> {
  const data = await readKeyFile(file);
  const entry = data.keys.find((k) => k.id === id);
  if (!entry) throw new ConfigError(`no API key with id "${id}" in ${file}`);
  if (!entry.revoked) entry.revoked = now.toISOString();
  await writeAtomic(file, `${JSON.stringify(data, null, 2)}\n`, 0o600);
  return entry;
}

/**
 * The gateway's view of the key file, reloaded when the file changes (checked every
 * `refreshMs`), so `mvr apikey revoke` needs no restart.
 */
export class ApiKeyStore {
  private byId = new Map<string, { digest: Buffer; revoked: boolean }>();
  private signature = '';
  private timer: NodeJS.Timeout | null = null;
  /** The load of the file running now, and the one queued after it (see refresh()). */
  private loading: Promise<void> | null = null;
  private again: Promise<void> | null = null;
  private readonly dummy = hash('sha256', 'dummy', 'buffer');

  constructor(readonly file: string, private readonly refreshMs = 250) {}

  /** Loads the file now and starts watching it. */
  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh().catch(() => undefined), this.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Number of live (not revoked) keys. */
  get liveKeys(): number {
    let n = 0;
    for (const k of this.byId.values()) if (!k.revoked) n++;
    return n;
  }

  /**
   * Reloads the file if its identity, size or mtime changed. One load at a time: a call made
   * while a load is running waits for it and then looks again, so when it resolves every change
   * made before it was called is applied, and a slow load that read an older file can never
   * finish after (and undo) a newer one, such as a revocation.
   */
  refresh(): Promise<void> {
    if (!this.loading) {
      this.loading = this.load().finally(() => {
        this.loading = null;
      });
      return this.loading;
    }
    this.again ??= this.loading.then(
      () => this.rerun(),
      () => this.rerun(),
    );
    return this.again;
  }

  private rerun(): Promise<void> {
    this.again = null;
    return this.refresh();
  }

  private async load(): Promise<void> {
    const st = await stat(this.file).catch(() => null);
    const sig = st ? `${st.ino}:${st.size}:${st.mtimeMs}` : 'missing';
    if (sig === this.signature) return;
    const data = await readKeyFile(this.file);
    this.byId = new Map(data.keys.map((k) => [k.id, { digest: Buffer.from(String(k.sha256), 'hex'), revoked: k.revoked !== null }]));
    this.signature = sig;
  }

  /**
   * Checks an `Authorization` header. The scheme is case-insensitive (RFC 7235); the key is
   * hashed and compared in constant time. Returns the key id, or throws {@link UnauthorizedError}.
   */
  check(header: string | undefined): string {
    if (!header) throw new UnauthorizedError('an API key is required: send "Authorization: Bearer <API_KEY>"', false);
    const m = /^bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
    if (!m) throw new UnauthorizedError('the Authorization header must use the Bearer scheme', false);
    const token = m[1]!;
    const parts = KEY_FORMAT.exec(token);
    const entry = parts ? this.byId.get(parts[1]!) : undefined;
    // Compared even when the id is unknown (against a dummy), so timing does not tell whether an id exists.
    const stored = entry?.digest ?? this.dummy;
    const presented = hash('sha256', token, 'buffer');
    const match = stored.length === presented.length && timingSafeEqual(stored, presented) && entry !== undefined;
    if (!match || entry.revoked) throw new UnauthorizedError('the API key is not valid or has been revoked', true);
    return parts![1]!;
  }
}
