import { lstatSync, statSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { NoBuildHistoryError, ReadTooLargeError, RecordUnavailableError, StoreUnavailableError } from '../core/errors/errors.ts';
import { fileVersion, NotARegularFileError, readRegularRange, regularFileSize } from '../core/files.ts';
import { BUILDS_DIR, CURRENT_LINK, KEPT_FILE, MANIFEST_FILE } from '../core/layout.ts';
import { checkRangeLimit } from '../core/limits.ts';
import { type KeptBuild, readKept } from './kept-builds.ts';
import { oneAtATime } from './one-at-a-time.ts';
import { nullIfMissing, publicKeySet, publicLogFile, publicLogVkey, readFileOrNull, readWithinLimit } from './public-files.ts';
import { type BuildAcceptance, type Store, takeEveryBuild } from './store.ts';

/** Why a folder holding one build's files itself keeps no history. */
const A_COPY = 'the records folder holds one build\'s files itself (a copy), with no "current" link or kept.json';

/**
 * Records in a local folder laid out by `mvr build`: `<records>/current -> builds/<id>`, the
 * kept builds under `builds/` listed in `kept.json`; or a folder that itself holds
 * `manifest.json` (a copy of one build's folder, synced from object storage), which keeps no
 * history and no log. A records folder is written by `mvr build` (and filled by `mvr pull`), never
 * published to. The key set and the log's public files are in the public folder.
 *
 * "Not found" is only believed while the build root is there: a missing folder is
 * STORE_UNAVAILABLE, never a reason to say a domain was never audited.
 */
export class FolderStore implements Store {
  private root: string | null = null;
  /** The id of the build `current` named at the last refresh; null for a copy of one build's folder. */
  private build: string | null = null;
  private error: string | null = 'not loaded yet';
  private accept: BuildAcceptance = takeEveryBuild;

  constructor(
    readonly recordsDir: string,
    private readonly publicDir: string,
  ) {}

  get name(): string {
    return this.recordsDir;
  }

  /** One at a time: a refresh asked for while one runs waits for it. */
  readonly refresh = oneAtATime(() => this.look());

  /**
   * The live pointer (`current`) is the one link followed, resolved here once per build; every
   * file below it is opened without following a link (core/files.ts), so a link in a build leads
   * nowhere: not out of the build, not to another build's file.
   */
  private async look(): Promise<void> {
    for (const candidate of [join(this.recordsDir, CURRENT_LINK), this.recordsDir]) {
      const resolved = await realpath(candidate).catch(() => null);
      if (resolved && (await regularFileSize(join(resolved, MANIFEST_FILE)).catch(() => null)) !== null) {
        const build = candidate === this.recordsDir ? null : basename(resolved);
        if (resolved === this.root) this.error = null;
        else {
          // Not taken: the build served so far stays served (while its folder is there).
          await this.accept({
            generation: resolved,
            build,
            readFile: (name) => readFileOrNull(join(resolved, name)),
            keySet: this.keySet(),
            take: () => this.take(resolved, build),
          });
        }
        return;
      }
    }
    this.root = null;
    this.build = null;
    this.error = `no build in ${this.recordsDir} (missing ${CURRENT_LINK}/${MANIFEST_FILE}; run "mvr build")`;
  }

  acceptBuildsWith(accept: BuildAcceptance): void {
    this.accept = accept;
  }

  private take(root: string, build: string | null): void {
    this.root = root;
    this.build = build;
    this.error = null;
  }

  generation(): string {
    return this.root ?? '';
  }

  /** The live build's id as last refreshed (what `readLiveRange` reads from); null without one or for a copy of one build. */
  liveBuild(): string | null {
    return this.build;
  }

  describe() {
    return { ok: this.root !== null, build: this.root, error: this.error };
  }

  /**
   * A range of a live build's file (a record's range of a pack), read only from a regular file
   * ({@link readRegularRange}): a FIFO, a folder or a device in its place is UNAVAILABLE at once.
   * A missing file is told apart from a missing build by the manifest, so "not there" is never
   * believed from a vanished or pruned folder: the live build is looked up again once instead.
   */
  async readLiveRange(name: string, start: number, length: number): Promise<Buffer | null> {
    checkRangeLimit(name, length);
    for (let attempt = 0; attempt < 2; attempt++) {
      const root = this.root;
      if (!root) throw new StoreUnavailableError(`records unavailable: ${this.error}`);
      const file = join(root, name);
      try {
        return await readRegularRange(file, start, length);
      } catch (error) {
        if (error instanceof NotARegularFileError) throw new RecordUnavailableError(`${file} ${error.message}`);
        if (lstatSync(join(root, MANIFEST_FILE), { throwIfNoEntry: false })) {
          const code = (error as NodeJS.ErrnoException).code;
          if (code === 'ENOENT') return null;
          throw new RecordUnavailableError(`${file} is unreadable (${code ?? 'error'})`, { cause: error });
        }
      }
      // The build we were reading may have been pruned or the folder removed: look again.
      await this.refresh();
    }
    throw new StoreUnavailableError(`records unavailable: ${this.error ?? 'the live build changed while it was read'}`);
  }

  async readLiveFile(name: string): Promise<Buffer | null> {
    const root = this.root;
    if (!root) throw new StoreUnavailableError(`records unavailable: ${this.error}`);
    return readFileOrNull(join(root, name));
  }

  keySet() {
    return publicKeySet(this.publicDir);
  }

  /** A build swaps, then writes kept.json, then prunes: the file's version tells when to read the list again. */
  keptVersion(): Promise<string> {
    return fileVersion(join(this.recordsDir, KEPT_FILE));
  }

  async keptBuilds(): Promise<KeptBuild[]> {
    if (!this.root) throw new StoreUnavailableError(`records unavailable: ${this.error}`);
    // A folder that serves records but names no build is a copy of one build's folder.
    if (!this.build) throw new NoBuildHistoryError(A_COPY);
    // The build served first: `current` may name a newer build the gateway refused.
    const builds = await readKept(this.recordsDir, this.build);
    if (builds.length === 0) throw new StoreUnavailableError(`records unavailable: no kept build readable in ${this.recordsDir}`);
    return builds;
  }

  async readFile(build: string, path: string): Promise<Buffer | null> {
    try {
      return await readWithinLimit(this.file(build, path));
    } catch (error) {
      if (error instanceof ReadTooLargeError) throw error;
      return this.missing(this.file(build, path), error);
    }
  }

  async readRange(build: string, path: string, start: number, length: number): Promise<Buffer | null> {
    checkRangeLimit(path, length);
    const file = this.file(build, path);
    try {
      return await readRegularRange(file, start, length);
    } catch (error) {
      if (error instanceof NotARegularFileError) throw new RecordUnavailableError(`${file} ${error.message}`);
      return this.missing(file, error);
    }
  }

  /** From the opened file's descriptor, as its reads are: a link in its place is UNAVAILABLE, its target never sized. */
  async fileSize(build: string, path: string): Promise<number | null> {
    const file = this.file(build, path);
    try {
      return await regularFileSize(file);
    } catch (error) {
      if (error instanceof NotARegularFileError) throw new RecordUnavailableError(`${file} ${error.message}`);
      return this.missing(file, error);
    }
  }

  /**
   * The build the records are served from (it follows `current` on refresh), not a fresh look at
   * the link: `GET /v1/verify` and `GET /v1/proof` answer from one build, even in the moment after
   * a swap. A flat copy of one build has no log.
   */
  async logBuild(): Promise<string> {
    if (!this.build)
      throw new StoreUnavailableError(`no live build in ${this.recordsDir}: ${this.error ?? 'a copy of one build has no log'}`);
    return this.build;
  }

  logFile(path: string): Promise<Buffer | null> {
    return publicLogFile(this.publicDir, path);
  }

  logVkey(): Promise<Buffer | null> {
    return publicLogVkey(this.publicDir);
  }

  async close(): Promise<void> {}

  private file(build: string, path: string): string {
    return join(this.recordsDir, BUILDS_DIR, build, path);
  }

  /**
   * A file of a kept build that is not there is null only while the records folder is: a folder
   * taken away is STORE_UNAVAILABLE, never "no such build".
   */
  private missing(path: string, error: unknown): null {
    if (nullIfMissing(path, error) === null && !statSync(join(this.recordsDir, BUILDS_DIR), { throwIfNoEntry: false })) {
      throw new StoreUnavailableError(`records unavailable: ${join(this.recordsDir, BUILDS_DIR)} is gone`);
    }
    return null;
  }
}
