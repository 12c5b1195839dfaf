import { type FileHandle, open } from 'node:fs/promises';
import { join } from 'node:path';
import { INDEX_FILE } from '../core/layout.ts';

/**
 * The lookup index (`index.jsonl`, which prefix lookups read to place domains in the map) of a
 * mirrored build, written from the records of its checked packs and never fetched: the lines
 * `mvr build` writes (`indexLine`, made where each record is checked), in its order (by shard, then by domain), so an honest source's index and the
 * mirror's are the same bytes. Packs come in map order (by SHA-256 of the domain), so a shard's
 * records arrive together and one shard at a time is held to be sorted by domain.
 */
export class LookupIndex {
  private shard: string | null = null;
  private held: { domain: string; line: string }[] = [];

  private constructor(private readonly out: FileHandle) {}

  /** Starts the index of the build being made in `buildDir`. */
  static async open(buildDir: string): Promise<LookupIndex> {
    return new LookupIndex(await open(join(buildDir, INDEX_FILE), 'w'));
  }

  /** The lines of a pack's records that passed their checks (./serve-rule-check.ts), in map order, each with its shard and domain (a pack that did not is never given). */
  async add(records: readonly { shard: string; domain: string; line: string }[]): Promise<void> {
    for (const { shard, domain, line } of records) {
      // The shard is the record's folder in a build (`ab/` of `ab/<domain>.json`), the index's first order.
      if (shard !== this.shard) await this.flush();
      this.shard = shard;
      this.held.push({ domain, line });
    }
  }

  /** The last shard written, and the file closed. */
  async finish(): Promise<void> {
    await this.flush();
    await this.out.close();
  }

  /** Closes the file unfinished (the build was refused: its staging folder goes). */
  async abort(): Promise<void> {
    await this.out.close().catch(() => undefined);
  }

  private async flush(): Promise<void> {
    if (this.held.length === 0) return;
    const lines = this.held.sort((a, b) => (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0)).map((h) => h.line);
    this.held = [];
    await this.out.write(lines.join(''));
  }
}
