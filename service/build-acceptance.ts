import { ReadTooLargeError, StoreUnavailableError } from '../core/errors.ts';
import { verifyRecordNode } from '../core/signing.ts';
import type { KeySetSource } from '../storage/key-set-source.ts';
import type { FoundBuild, Store } from '../storage/store.ts';
import { checkBuildIssuer } from './build-issuer.ts';
import { loadServedBuild, type ServedBuild, statementProblem } from './build-maps.ts';

/** A build the store names live that is not served, and why. */
export interface BuildRefusal {
  build: string;
  reason: string;
}

/** The build served: its checked map, and the key set load it was last checked against. */
interface Served {
  generation: string;
  map: ServedBuild;
  keyLoads: number;
  /** Why it no longer checks (the key set changed under it and lacks its key); null while it does. */
  problem: string | null;
}

/**
 * Decides which build the records are served from, the one place a build is refused. A build the
 * store finds live is served only once its statement and domain map check against the key set it
 * comes with (read again once when the statement names a key it lacks: the key set may be a
 * moment behind the build), its pack index matches the packs the statement signs, and it names
 * the gateway's issuer. A build that does not check is refused whole, told once, and the
 * build served before stays served. A refused build is checked again only when the key set
 * changes, so a forged build costs one check, not one per refresh; a build that could not be read
 * at all is tried again at the next refresh.
 */
export class BuildAcceptor {
  private current: Served | null = null;
  private refusal: (BuildRefusal & { generation: string; keyVersion: string }) | null = null;
  /** Why the last build found could not be read (not a refusal: it is tried again). */
  private unreadable: string | null = null;
  /** The check in progress, so refreshes that find one build at once check it once. */
  private checking: { generation: string; done: Promise<void> } | null = null;

  constructor(
    private readonly store: Store,
    private readonly keys: KeySetSource,
    /** The gateway's issuer: a build of another is refused (it would answer under two names). */
    private readonly issuer: string,
    private readonly onRefused?: (refusal: BuildRefusal) => void,
  ) {
    store.acceptBuildsWith((found) => this.accept(found));
  }

  /** The served build's map and pack index; STORE_UNAVAILABLE when the store serves none or it no longer checks. */
  served(): ServedBuild {
    const generation = this.store.generation();
    if (!this.current || this.current.generation !== generation) throw new StoreUnavailableError(this.whyNone());
    this.recheck(this.current);
    if (this.current.problem) throw new StoreUnavailableError(this.current.problem);
    return this.current.map;
  }

  /** The build kept out, while it is the one the store names live. */
  refused(): BuildRefusal | null {
    return this.refusal && { build: this.refusal.build, reason: this.refusal.reason };
  }

  /** Why no checked build is served, or null while one is. */
  problem(): string | null {
    try {
      this.served();
      return null;
    } catch (error) {
      return (error as Error).message;
    }
  }

  private whyNone(): string {
    const storeError = this.store.describe().error;
    if (this.current && storeError) return `records unavailable: ${storeError}`;
    return this.refusal?.reason ?? this.unreadable ?? `records unavailable: ${storeError ?? 'no live build'}`;
  }

  private accept(found: FoundBuild): Promise<void> {
    if (this.checking?.generation !== found.generation) {
      const done = this.check(found).finally(() => {
        if (this.checking?.done === done) this.checking = null;
      });
      this.checking = { generation: found.generation, done };
    }
    return this.checking.done;
  }

  private async check(found: FoundBuild): Promise<void> {
    const build = found.build ?? `at ${this.store.name}`;
    const keyVersion = await found.keySet.version().catch(() => 'unknown');
    if (this.refusal?.generation === found.generation && this.refusal.keyVersion === keyVersion) return;
    let unread = true;
    const readFile = (name: string) =>
      found.readFile(name).catch((error: unknown) => {
        // A file larger than its kind may be is refused with its build, not read again at every
        // refresh: a build's files never change.
        if (!(error instanceof ReadTooLargeError)) unread = true;
        throw error;
      });
    try {
      let keys = await this.keys
        .read(found.keySet)
        .catch((error: Error) => Promise.reject(new StoreUnavailableError(`key set unavailable: ${found.keySet.name}: ${error.message}`)));
      unread = false;
      const map = checkBuildIssuer(
        await loadServedBuild(readFile, keys, found.build, this.store.name, async () => {
          keys = await this.keys.read(found.keySet);
          return keys;
        }),
        this.issuer,
      );
      // One step: the key set it was checked against, its map and the store's swap.
      this.keys.use(keys, keys.version);
      found.take();
      this.current = { generation: found.generation, map, keyLoads: this.keys.generation(), problem: null };
      this.refusal = null;
      this.unreadable = null;
    } catch (error) {
      const reason = (error as Error).message;
      if (unread) {
        this.unreadable = `build ${build} cannot be checked: ${reason}`;
        return;
      }
      this.refusal = { build, reason, generation: found.generation, keyVersion: await found.keySet.version().catch(() => 'unknown') };
      this.onRefused?.({ build, reason });
    }
  }

  /** The key set may change under the served build (a key retired by hand): its statement is verified again then. */
  private recheck(served: Served): void {
    const loads = this.keys.generation();
    if (served.keyLoads === loads) return;
    const keys = this.keys.get();
    const problem = statementProblem(verifyRecordNode(served.map.statement, keys.keySet), keys);
    served.keyLoads = loads;
    served.problem = problem && `build ${served.map.build} refused: ${problem}`;
  }
}
