/**
 * The errors of the lock module (core/file-lock.ts) and of a generation's commit
 * (core/generation.ts). Re-exported by `errors.ts`, which the application imports.
 */
import { MvrError } from '@merchant-verify/verifier';

/** A lock another live process holds, past the wait for it: STORE_UNAVAILABLE, naming the holder. */
export class LockHeldError extends MvrError {
  static readonly code = 'STORE_UNAVAILABLE';
  constructor(
    readonly lock: string,
    readonly holderPid: number | null,
    waitedMs: number,
  ) {
    super(
      LockHeldError.code,
      `${lock} is held by process ${holderPid ?? '(unknown)'}${waitedMs > 0 ? ` for over ${waitedMs / 1000} s` : ''}; try again`,
    );
  }
}

/**
 * A change refused because its writer lost the lock while it worked (stalled past the stale limit,
 * the lock taken over) and another writer changed the file meanwhile: nothing was written.
 */
export class LockLostError extends MvrError {
  static readonly code = 'LOCK_LOST';
  constructor(message: string) {
    super(LockLostError.code, message);
  }
}
