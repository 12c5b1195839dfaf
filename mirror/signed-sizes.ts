import { type BuildStatement, statementLeafSize } from '#shared';
import { MirrorRefusedError } from '../core/errors/errors.ts';
import { READ_LIMITS } from '../core/limits.ts';

// How many bytes a mirror may read of a build's files once its statement is checked: what the
// statement signs, never what the source says. A file past it is refused at the first byte over.
// (A pack is read in ranges up to the length the statement lists for it, so never past it.)

/** Bytes of one leaf of the map a statement signs (the package's rule: v1 a domain hash, v2 an entry); MIRROR_REFUSED for a schema this mirror does not know. */
export function mapLeafBytes(statement: BuildStatement): number {
  const bytes = statementLeafSize(statement.schema);
  if (bytes === null)
    throw new MirrorRefusedError(
      `build ${statement.build} refused: its statement's schema ${JSON.stringify(statement.schema)} is not one this mirror knows the domain map of`,
    );
  return bytes;
}

/**
 * The domain map's length as the statement signs it: its record count times a leaf's bytes, within
 * the limits table's. MIRROR_REFUSED for a count that is not a whole number.
 */
export function signedMapBytes(statement: BuildStatement): number {
  if (!Number.isSafeInteger(statement.records) || statement.records < 0)
    throw new MirrorRefusedError(
      `build ${statement.build} refused: its statement's record count ${statement.records} is not a whole number`,
    );
  return Math.min(statement.records * mapLeafBytes(statement), READ_LIMITS.domainMap.bytes);
}
