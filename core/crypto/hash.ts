import { hash } from 'node:crypto';
import { type Sha256, treeHasher } from '#shared';

/** SHA-256 with node:crypto, and RFC 6962 tree hashing over it: the build's log and domain map, and the gateway's proofs. */
export const sha256: Sha256 = (data) => hash('sha256', data, 'buffer');
export const hasher = treeHasher(sha256);
