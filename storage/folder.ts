import { statSync } from 'node:fs';
import { readFile, realpath, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { StoreUnavailableError, RecordUnavailableError } from '@merchant-verify/verifier/errors';
import { NotARecordFileError, readRegularFile } from '../core/files.ts';
import { CURRENT_LINK, MANIFEST_FILE, recordPath } from '../core/layout.ts';

/** Where record bytes come from: a local folder here, an HTTP origin elsewhere. */
export interface RecordSource {
  /** The record file's bytes, or null when the store is readable and has no record file for the domain. */
  read(domain: string): Promise<Buffer | null>;
  /** A file of the live build beside its records (its domain map, its statement), or null when it has none. */
  readBuildFile(name: string): Promise<Buffer | null>;
  /** The live build's id, when the store names one (null for an origin serving one build's folder). */
  liveBuild(): string | null;
  /** Re-checks which build is live; cheap, called on a timer and after a failed verification. */
  refresh(): Promise<void>;
  /** Identifies the live build; verified bytes are cached per generation. */
  generation(): string;
  /** For health: what is being served and whether it is reachable. */
  describe(): { ok: boolean; build: string | null; error: string | null };
  /** Releases connections, for sources that hold any. */
  close?(): Promise<void>;
}

/**
 * Records in a local folder laid out by `mvr build`: `<records>/current -> builds/<id>`, or a
 * folder that itself holds `manifest.json` (a copy synced from object storage).
 *
 * "Not found" is only believed while the build root is there: a missing folder is
 * STORE_UNAVAILABLE, never a reason to say a domain was never audited.
 */
export class FolderRecordSource implements RecordSource {
  private root: string | null = null;
  /** The id of the build `current` named at the last refresh; null for a copy of one build's folder. */
  private build: string | null = null;
  private error: string | null = 'not loaded yet';

  constructor(readonly recordsDir: string) {}

  async refresh(): Promise<void> {
    for (const candidate of [join(this.recordsDir, CURRENT_LINK), this.recordsDir]) {
      const resolved = await realpath(candidate).catch(() => null);
      if (resolved && (await stat(join(resolved, MANIFEST_FILE)).catch(() => null))) {
        this.root = resolved;
        this.build = candidate === this.recordsDir ? null : basename(resolved);
        this.error = null;
        return;
      }
    }
    this.root = null;
    this.build = null;
    this.error = `no build in ${this.recordsDir} (missing ${CURRENT_LINK}/${MANIFEST_FILE}; run "mvr build")`;
  }

  generation(): string {
    return this.root ?? '';
  }

  /** The live build's id as last refreshed (what `read` serves from); null without one or for a copy of one build. */
  liveBuild(): string | null {
    return this.build;
  }

  describe() {
    return { ok: this.root !== null, build: this.root, error: this.error };
  }

  /**
   * A record's bytes, read only from a regular file of at most 64 KiB ({@link readRegularFile}).
   * A missing file is told apart from a missing build by the manifest, so "not there" is never
   * believed from a vanished or pruned folder: the live build is looked up again once instead.
   * Whether a missing file means "never audited" is not this source's to say: the build's
   * domain map decides that (see the records service).
   */
  async read(domain: string): Promise<Buffer | null> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const root = this.root;
      if (!root) throw new StoreUnavailableError(`records unavailable: ${this.error}`);
      const file = join(root, recordPath(domain));
      try {
        return await readRegularFile(file);
      } catch (error) {
        if (error instanceof NotARecordFileError) throw new RecordUnavailableError(`record file of ${domain} ${error.message}`);
        if (statSync(join(root, MANIFEST_FILE), { throwIfNoEntry: false })) {
          const code = (error as NodeJS.ErrnoException).code;
          if (code === 'ENOENT') return null;
          throw new RecordUnavailableError(`record file of ${domain} is unreadable (${code ?? 'error'})`, { cause: error });
        }
      }
      // The build we were reading may have been pruned or the folder removed: look again.
      await this.refresh();
    }
    throw new StoreUnavailableError(`records unavailable: ${this.error ?? 'the live build changed while it was read'}`);
  }

  /** A file of the live build beside its records (its domain map, its statement); null when it has none. */
  async readBuildFile(name: string): Promise<Buffer | null> {
    const root = this.root;
    if (!root) throw new StoreUnavailableError(`records unavailable: ${this.error}`);
    try {
      return await readFile(join(root, name));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw new StoreUnavailableError(`cannot read ${join(root, name)}: ${(error as Error).message}`);
    }
  }
}
