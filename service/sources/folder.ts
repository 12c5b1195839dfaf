import { statSync } from 'node:fs';
import { readFile, realpath, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { StoreUnavailableError, RecordUnavailableError } from '../../core/errors.ts';
import { CURRENT_LINK, MANIFEST_FILE, recordPath } from '../../core/layout.ts';

/** Where record bytes come from: a local folder here, an HTTP origin elsewhere. */
export interface RecordSource {
  /** The record file's bytes, or null when the store is readable and has no record for the domain. */
  read(domain: string): Promise<Buffer | null>;
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
   * Whether the file exists is asked synchronously, without an exception for "no such file":
   * a never-audited domain then costs two stat calls of a few microseconds, not two trips through
   * libuv's thread pool and an error object. The bytes themselves are read asynchronously, so
   * a slow read (a cold disk, a network file system) never stalls other requests. A missing file
   * is told apart from a missing build by the manifest, checked on every miss, so "not found" is
   * never believed from a vanished folder.
   */
  async read(domain: string): Promise<Buffer | null> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const root = this.root;
      if (!root) throw new StoreUnavailableError(`records unavailable: ${this.error}`);
      const file = join(root, recordPath(domain));
      try {
        if (statSync(file, { throwIfNoEntry: false }) !== undefined) return await readFile(file);
        if (statSync(join(root, MANIFEST_FILE), { throwIfNoEntry: false })) return null;
      } catch (error) {
        // The build we were reading may have been pruned or the folder removed: look again.
        if (statSync(join(root, MANIFEST_FILE), { throwIfNoEntry: false })) {
          const code = (error as NodeJS.ErrnoException).code;
          throw new RecordUnavailableError(`record for ${domain} is unreadable (${code ?? 'error'})`, { cause: error });
        }
      }
      await this.refresh();
    }
    throw new StoreUnavailableError(`records unavailable: ${this.error ?? 'the live build changed while it was read'}`);
  }
}
