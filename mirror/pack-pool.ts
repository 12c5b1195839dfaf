import { link, mkdir, open, readdir, rename, stat, truncate, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { type PackFile, packPath } from '#shared';
import { MirrorRefusedError } from '../core/errors/errors.ts';
import { writeAll } from '../core/files.ts';
import { BUILDS_DIR, MIRROR_POOL_DIR, PACKS_DIR } from '../core/layout.ts';
import { READ_LIMITS } from '../core/limits.ts';
import type { MirrorSource } from './source.ts';

/** Bytes asked for in one ranged read of a pack: the most a read of a pack may have (core/limits.ts). */
export const CHUNK_BYTES = READ_LIMITS.packRange.bytes;

/**
 * The packs of a mirror folder, by hash: those its builds already hold (any build, hard-linked
 * into the next one rather than fetched again), and `.packs/`, where a pack is fetched into
 * `<sha256>.part` by ranged reads (an interrupted run continues it from its length) and renamed
 * `<sha256>.jsonl` once its bytes hash to its name, until a build that holds it goes live.
 */
export class PackPool {
  private readonly pool: string;

  private constructor(
    dir: string,
    /** Complete copies already in the folder, by hash. */
    private readonly held: Map<string, string>,
  ) {
    this.pool = join(dir, MIRROR_POOL_DIR);
  }

  /** The pool of the mirror folder `dir`: the packs its builds and its `.packs/` hold. */
  static async of(dir: string): Promise<PackPool> {
    const held = new Map<string, string>();
    const builds = join(dir, BUILDS_DIR);
    for (const build of (await readdir(builds).catch(() => [])).filter((n) => !n.startsWith('.'))) {
      for (const name of await readdir(join(builds, build, PACKS_DIR)).catch(() => [] as string[]))
        if (name.endsWith('.jsonl')) held.set(name.slice(0, -'.jsonl'.length), join(builds, build, PACKS_DIR, name));
    }
    await mkdir(join(dir, MIRROR_POOL_DIR), { recursive: true });
    for (const name of await readdir(join(dir, MIRROR_POOL_DIR)))
      if (name.endsWith('.jsonl')) held.set(name.slice(0, -'.jsonl'.length), join(dir, MIRROR_POOL_DIR, name));
    return new PackPool(dir, held);
  }

  /** A complete copy of a pack the folder holds already, or null. */
  heldCopy(sha256: string): string | null {
    return this.held.get(sha256) ?? null;
  }

  /**
   * Fetches pack `k` of `build` into `.packs/<sha256>.part`, continuing what an earlier run left
   * (a part longer than the pack is begun again). `onBytes` is told of each chunk. The bytes are
   * not checked here: {@link keep} takes them once they are. MIRROR_REFUSED when the source has
   * no such pack or it ends before the length the statement gives.
   */
  async fetch(
    source: MirrorSource,
    build: string,
    k: number,
    file: PackFile,
    opts: { chunkBytes?: number; signal?: AbortSignal; onBytes?: (n: number) => void },
  ): Promise<{ path: string; fetched: number }> {
    const part = join(this.pool, `${file.sha256}.part`);
    let size = (await stat(part).catch(() => null))?.size ?? 0;
    if (size > file.bytes) {
      await truncate(part, 0);
      size = 0;
    }
    const at = `pack ${k} (${file.sha256})`;
    const where = { pack: { number: k, sha256: file.sha256 } };
    let fetched = 0;
    const handle = await open(part, 'a');
    try {
      while (size < file.bytes) {
        opts.signal?.throwIfAborted();
        const chunk = await source.readRange(
          build,
          packPath(file.sha256),
          size,
          Math.min(opts.chunkBytes ?? CHUNK_BYTES, file.bytes - size),
        );
        if (chunk === null) throw new MirrorRefusedError(`build ${build} refused: ${at} is missing from ${source.name}`, where);
        if (chunk.length === 0)
          throw new MirrorRefusedError(
            `build ${build} refused: ${at} ends at byte ${size}, but the statement says it is ${file.bytes} bytes`,
            where,
          );
        await writeAll(handle, chunk);
        size += chunk.length;
        fetched += chunk.length;
        opts.onBytes?.(chunk.length);
      }
      await handle.sync();
    } finally {
      await handle.close();
    }
    return { path: part, fetched };
  }

  /** The bytes of a pack fetched or held. */
  async read(path: string): Promise<Buffer> {
    // Into shared memory: a verifying worker reads the pack where it is, with no copy of its own
    // waiting for that worker's GC (./verify-pool.ts).
    const handle = await open(path, 'r');
    try {
      const { size } = await handle.stat();
      const bytes = Buffer.from(new SharedArrayBuffer(size));
      let at = 0;
      for (let n = -1; at < size && n !== 0; at += n) n = (await handle.read(bytes, at, size - at, at)).bytesRead;
      return bytes.subarray(0, at);
    } finally {
      await handle.close();
    }
  }

  /** A fetched pack whose bytes checked: `.packs/<sha256>.jsonl`, held from now on. */
  async keep(sha256: string, part: string): Promise<string> {
    const path = join(this.pool, `${sha256}.jsonl`);
    await rename(part, path);
    this.held.set(sha256, path);
    return path;
  }

  /** A fetched pack whose bytes did not check: removed, so the next run fetches it afresh. */
  async discard(part: string): Promise<void> {
    await unlink(part).catch(() => undefined);
  }

  /** Links a held pack into a build folder being made (`packs/<sha256>.jsonl`): no second copy. */
  async linkInto(buildDir: string, sha256: string, path: string): Promise<void> {
    await mkdir(join(buildDir, PACKS_DIR), { recursive: true });
    await link(path, join(buildDir, packPath(sha256)));
  }

  /** Once a build holding them is live: the pool's copies of its packs are dropped (the build has them). */
  async release(sha256s: string[]): Promise<void> {
    for (const sha of sha256s) await unlink(join(this.pool, `${sha}.jsonl`)).catch(() => undefined);
  }
}
