import { hash, timingSafeEqual } from 'node:crypto';
import { StoreUnavailableError, UnauthorizedError } from '../core/errors/errors.ts';
import { type ApiKeyEntry, type ApiKeyScope, type ApiKeyTable, KEY_FORMAT, scopesOf, tableOf } from './api-keys.ts';
import { KeyLookUps } from './key-look-ups.ts';

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
 * changes (checked every `refreshMs`), so a request never waits on the table (but for a key with
 * an unknown id, see {@link ApiKeyStore.authenticate}), and `mvr apikey revoke` reaches a running
 * gateway within `refreshMs` plus one load. `now` is its clock (ms), a test's own in tests.
 */
export class ApiKeyStore {
  private byId = new Map<string, KnownKey>();
  // Authorization headers decided since the last load: accepted ones with their key id, refused ones (a well-formed
  // header whose key did not match) with null. A caller's header is parsed and hashed once, not on every request (a
  // twentieth of a hot record's cost, and the most of a refusal's). Memory only; emptied by every reload, so a
  // revocation or a new key lands with it; bounded (emptied when full), since anyone can send new headers.
  private decided = new Map<string, string | null>();
  private version = '';
  /** When the snapshot was last confirmed current (by `now`), and why it could not be since. */
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
  /** Looks at the table for ids the snapshot does not hold: one per id at a time, unknown ones remembered a while. */
  private readonly lookUps: KeyLookUps;

  constructor(
    where: string | ApiKeyTable,
    private readonly refreshMs = 250,
    private readonly staleMs = API_KEYS_STALE_MS,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.table = tableOf(where);
    this.lookUps = new KeyLookUps((id) => this.lookUpOnce(id), now);
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

  /**
   * Whether a key id (one {@link authenticate} returned) has `scope`, as the snapshot says: read with
   * the key's hash, so a reload (a revocation) never loses or grants one, and a key made before
   * scopes has none.
   */
  hasScope(keyId: string, scope: ApiKeyScope): boolean {
    return this.byId.get(keyId)?.scopes.includes(scope) ?? false;
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
      this.loading = this.load().finally(() => (this.loading = null));
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

  /** For health: where the keys come from, and whether they are current. */
  state(): { ok: boolean; source: string; error: string | null } {
    return { ok: this.lastError === null, source: this.table.name, error: this.lastError };
  }

  /** For metrics: reloads, failed checks and looks at the table for unknown ids since start, and the live keys now. */
  counts(): { reloads: number; reloadFailures: number; lookUps: number; liveKeys: number } {
    return { reloads: this.reloads, reloadFailures: this.reloadFailures, lookUps: this.lookUps.count, liveKeys: this.liveKeys };
  }

  private async load(): Promise<void> {
    try {
      const sig = await this.table.version();
      if (sig !== this.version) {
        const keys = await this.table.entries();
        this.byId = new Map(keys.map((k) => [k.id, digestOf(k)]));
        this.decided = new Map();
        // The keys changed (a key created, say): an id unknown before may be one now.
        this.lookUps.forgetUnknown();
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
    const known = header === undefined ? undefined : this.decided.get(header);
    if (known === undefined) return this.checkFirst(header);
    this.assertCurrent();
    if (known === null) throw REFUSED.invalidKey;
    return known;
  }

  /** {@link check} of a header not decided since the last load: parsed, hashed and compared, then remembered. */
  private checkFirst(header: string | undefined): string {
    const token = tokenOf(header);
    this.assertCurrent();
    const parts = KEY_FORMAT.exec(token);
    const entry = parts ? this.byId.get(parts[1]!) : undefined;
    // Compared even when the id is unknown (against a dummy), so timing does not tell whether an id exists.
    const stored = entry?.digest ?? this.dummy;
    const presented = hash('sha256', token, 'buffer');
    const match = stored.length === presented.length && timingSafeEqual(stored, presented) && entry !== undefined;
    const id = match && !entry.revoked ? parts![1]! : null;
    if (header!.length <= MAX_REMEMBERED_HEADER) {
      if (this.decided.size >= DECIDED_KEPT) this.decided.clear();
      this.decided.set(header!, id);
    }
    if (id === null) throw REFUSED.invalidKey;
    return id;
  }

  /** STORE_UNAVAILABLE once the keys could not be confirmed current for `staleMs`. */
  private assertCurrent(): void {
    if (this.now() - this.confirmedAt > this.staleMs) {
      throw new StoreUnavailableError(`the API keys could not be read for over ${this.staleMs / 1000} s: ${this.lastError}`);
    }
  }

  /**
   * {@link check}, but a well-formed key whose id the snapshot does not hold is looked up before it
   * is refused, so a key works on the request right after `mvr apikey create` however fast keys
   * are made (as a JWKS client refetches on an unknown `kid`). Before the look, `spend()` is paid:
   * the caller's budget for requests without a valid key (gateway/auth.ts), which throws (429) when
   * it is spent, so a flood of made-up ids from one address costs the table at most that budget.
   * The look is cheap: one entry of a table that can read one (Redis), else the table's version (a
   * `stat` of the file), with the whole file read again only when that version moved; one per id
   * at a time, and an id the table did not hold refused from memory a while ({@link KeyLookUps}).
   * A key decided from the snapshot is decided in the same turn: the id, or the refusal
   * thrown; only a key being looked up gets a promise.
   */
  authenticate(header: string | undefined, spend: () => void | Promise<void> = () => undefined): string | Promise<string> {
    try {
      return this.check(header);
    } catch (error) {
      if (error !== REFUSED.invalidKey) throw error;
      const id = KEY_FORMAT.exec(tokenOf(header))?.[1];
      if (id === undefined || this.byId.has(id) || this.lookUps.knownUnknown(id)) throw error;
      const spent = spend();
      if (spent instanceof Promise) return spent.then(() => this.checkAfterLookUp(header, id, error));
      return this.checkAfterLookUp(header, id, error);
    }
  }

  private async checkAfterLookUp(header: string | undefined, id: string, refusal: unknown): Promise<string> {
    // A failed look refuses the key as before; the timer's next load reports the failure.
    await this.lookUps.lookUp(id).catch(() => undefined);
    if (!this.byId.has(id)) throw refusal;
    // Decided again: the refusal remembered before the look was of a snapshot without this id.
    return this.checkFirst(header);
  }

  /** Adds the entry of an id to the snapshot when the table holds it (one read of it, or a refresh); whether it is there now. */
  private async lookUpOnce(id: string): Promise<boolean> {
    if (this.table.entry) {
      const entry = await this.table.entry(id);
      // A load that ran meanwhile holds the newer word on this id (a revocation, say): it stays.
      if (entry && !this.byId.has(id)) this.byId.set(id, digestOf(entry));
    } else await this.refresh();
    return this.byId.has(id);
  }
}

/** Headers decided and remembered between two loads of the keys at most, and the longest one remembered. */
const DECIDED_KEPT = 10_000;
const MAX_REMEMBERED_HEADER = 512;

/** The token of a Bearer `Authorization` header; the scheme is case-insensitive (RFC 7235). */
function tokenOf(header: string | undefined): string {
  if (!header) throw REFUSED.noKey;
  const m = /^bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  if (!m) throw REFUSED.notBearer;
  return m[1]!;
}

/** What the snapshot keeps of an entry. */
interface KnownKey {
  /** The SHA-256 of the key. */
  digest: Buffer;
  revoked: boolean;
  scopes: readonly ApiKeyScope[];
}

/** What the snapshot keeps of an entry: the SHA-256 of its key, whether it is revoked, and its scopes. */
function digestOf(entry: ApiKeyEntry): KnownKey {
  return { digest: Buffer.from(String(entry.sha256), 'hex'), revoked: entry.revoked !== null, scopes: scopesOf(entry) };
}
