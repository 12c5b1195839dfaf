import { type FileHandle, open } from 'node:fs/promises';
import { join } from 'node:path';
import { splitPack } from '@merchant-verify/verifier/internal/issuer';
import { indexLine } from '../builder/changes.ts';
import { MirrorRefusedError } from '../core/errors.ts';
import { INDEX_FILE, recordPath } from '../core/layout.ts';
import type { VerificationRecord } from '../core/record.ts';

/**
 * The lookup index (`index.jsonl`, which prefix lookups read to place domains in the map) of a
 * mirrored build, written from the records of its checked packs and never fetched: the lines
 * `mvr build` writes, in its order (by shard, then by domain), so an honest source's index and the
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

  /** The records of a pack that passed its checks, in map order (a pack that did not is never given). */
  async add(pack: Buffer): Promise<void> {
    const records = splitPack(pack);
    if (typeof records === 'string') throw new MirrorRefusedError(`a checked pack is not one record a line: ${records}`);
    for (const bytes of records) {
      const record = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')) as VerificationRecord;
      // The shard is the record's folder in a build (`ab/` of `ab/<domain>.json`), the index's first order.
      const shard = recordPath(record.domain).slice(0, 2);
      if (shard !== this.shard) await this.flush();
      this.shard = shard;
      this.held.push({ domain: record.domain, line: indexLine(shard, record) });
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
