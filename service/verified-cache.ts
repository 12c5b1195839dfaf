/**
 * Verified records kept in memory, bounded by bytes, for one generation of (live build, key set):
 * a new build or key set empties it. Eviction is second chance, an approximation of least
 * recently used: a hit only marks its entry, and eviction looks at the oldest first, giving a
 * marked entry one more round at the newest end.
 */
export class VerifiedCache<T extends { bytes: Uint8Array }> {
  /** Oldest first (insertion order, and the order eviction looks at). */
  private entries = new Map<string, { value: T; used: boolean }>();
  private size = 0;
  /** Lookups answered from memory and not, since start (a new generation does not reset them). */
  private hits = 0;
  private misses = 0;

  constructor(readonly limitBytes: number) {}

  get(domain: string): T | undefined {
    const hit = this.entries.get(domain);
    if (!hit) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    hit.used = true;
    return hit.value;
  }

  set(domain: string, value: T): void {
    const size = entrySize(domain, value);
    if (size > this.limitBytes) return;
    this.delete(domain);
    this.entries.set(domain, { value, used: false });
    this.size += size;
    // Iterating a Map visits entries re-added behind the cursor, so a marked entry is looked at
    // again only after every other one.
    for (const [oldest, entry] of this.entries) {
      if (this.size <= this.limitBytes) break;
      this.entries.delete(oldest);
      if (entry.used) {
        entry.used = false;
        this.entries.set(oldest, entry);
      } else {
        this.size -= entrySize(oldest, entry.value);
      }
    }
  }

  clear(): void {
    this.entries.clear();
    this.size = 0;
  }

  stats(): { entries: number; bytes: number; limit: number; hits: number; misses: number } {
    return { entries: this.entries.size, bytes: this.size, limit: this.limitBytes, hits: this.hits, misses: this.misses };
  }

  private delete(domain: string): void {
    const previous = this.entries.get(domain);
    if (!previous) return;
    this.entries.delete(domain);
    this.size -= entrySize(domain, previous.value);
  }
}

/** Bytes an entry accounts for: the record, the key, and the map's overhead, roughly. */
function entrySize(domain: string, value: { bytes: Uint8Array }): number {
  return value.bytes.length + domain.length * 2 + 64;
}
