interface Entry {
  bytes: Promise<Buffer | null>;
  /** Bytes held once read (0 while the read is under way). */
  size: number;
  /** When it is read again (performance.now() ms); Infinity for a file that never changes. */
  until: number;
}

/**
 * The log's public files (tiles, checkpoint, log key) kept in memory, so the unauthenticated
 * routes cost the store nothing new per request: keyed by path alone (never by a query string),
 * a file that never changes (a full tile, a build's log key) kept while it fits in `maxBytes`
 * (least recently used dropped first), one that may (the checkpoint, a partial tile, a file not
 * there yet) for `freshMs`. Simultaneous misses of one path make one read; a failed read is not kept.
 */
export class LogFileCache {
  private readonly entries = new Map<string, Entry>();
  private held = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly freshMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The file at `path`, from memory when it is there and fresh; else `read()`, kept as `immutable` says. */
  get(path: string, immutable: boolean, read: () => Promise<Buffer | null>): Promise<Buffer | null> {
    const now = this.now();
    const known = this.entries.get(path);
    if (known && known.until > now) {
      // Most recently used last: a Map iterates in insertion order.
      this.entries.delete(path);
      this.entries.set(path, known);
      return known.bytes;
    }
    if (known) this.drop(path);
    const entry: Entry = { bytes: read(), size: 0, until: immutable ? Number.POSITIVE_INFINITY : now + this.freshMs };
    this.entries.set(path, entry);
    entry.bytes.then(
      (bytes) => {
        if (this.entries.get(path) !== entry) return;
        // A file not there yet may be written later: its absence is kept only briefly.
        if (bytes === null) entry.until = Math.min(entry.until, this.now() + this.freshMs);
        entry.size = bytes?.length ?? 0;
        this.held += entry.size;
        this.evict();
      },
      () => {
        if (this.entries.get(path) === entry) this.entries.delete(path);
      },
    );
    return entry.bytes;
  }

  /** Forgets every file that may change (a new live build has its own checkpoint). */
  dropChanging(): void {
    for (const [path, entry] of this.entries) if (entry.until !== Number.POSITIVE_INFINITY) this.drop(path);
  }

  /** Bytes held. */
  get bytes(): number {
    return this.held;
  }

  private drop(path: string): void {
    this.held -= this.entries.get(path)?.size ?? 0;
    this.entries.delete(path);
  }

  private evict(): void {
    for (const [path, entry] of this.entries) {
      if (this.held <= this.maxBytes) return;
      if (entry.size > 0) this.drop(path);
    }
  }
}
