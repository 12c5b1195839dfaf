import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StoreUnavailableError } from '@merchant-verify/verifier/errors';
import { BUCKET_LOG_PREFIX, BUILD_CHECKPOINT_FILE, BUILD_LOG_VKEY_OBJECT, LOG_CHECKPOINT, LOG_DIR, LOG_VKEY_PATH } from '../core/layout.ts';
import { FolderBuildStore, S3BuildStore, type BuildStore } from './build-store.ts';
import type { S3Bucket } from './s3/bucket.ts';
import type { RecordSource } from './folder.ts';
import { FolderRecordSource } from './folder.ts';
import { S3RecordSource } from './s3/records.ts';


/**
 * Where the log's pieces are read from, for proofs and for `/log/...`: the live build's files
 * (records, `<shard>/log.jsonl`, `log-checkpoint`) and the public files (checkpoint, tiles,
 * verifier key). A folder deployment has them in records/ and public/; a bucket has the build's
 * files with the build, the tiles under `log/`, and the checkpoint of the live build is the log's.
 * A store only fetches bytes (null: no such file); what they mean is decided in LogProofs.
 */
export interface LogStorage {
  liveBuild(): Promise<string>;
  builds: Pick<BuildStore, 'read' | 'readRecord'>;
  /** `checkpoint` or a tile path (`tile/...`). */
  logFile(path: string): Promise<Buffer | null>;
  vkey(): Promise<Buffer | null>;
}

/** The log storage of a records source; null for an http(s) origin, which serves one build's records only. */
export function logStorageOf(source: RecordSource, publicDir: string): LogStorage | null {
  if (source instanceof FolderRecordSource) return folderLogStorage(source, publicDir);
  if (source instanceof S3RecordSource) return bucketLogStorage(source.bucket, () => source.generation());
  return null;
}

function folderLogStorage(source: FolderRecordSource, publicDir: string): LogStorage {
  const file = (path: string) =>
    readFile(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw new StoreUnavailableError(`cannot read ${path}: ${error.message}`);
    });
  return {
    // The build the records service is serving (it follows `current` on its refresh), not a
    // fresh look at the link: `GET /v1/verify` and `GET /v1/proof` answer from one build, even in
    // the moment after a swap. A flat copy of one build has no log.
    liveBuild: async () => {
      const build = source.liveBuild();
      if (!build) throw new StoreUnavailableError(`no live build in ${source.recordsDir}: ${source.describe().error ?? 'a copy of one build has no log'}`);
      return build;
    },
    builds: new FolderBuildStore(source.recordsDir),
    logFile: (path) => file(join(publicDir, LOG_DIR, path)),
    vkey: () => file(join(publicDir, LOG_VKEY_PATH)),
  };
}

function bucketLogStorage(bucket: S3Bucket, live: () => string): LogStorage {
  const builds = new S3BuildStore(bucket, live);
  const liveBuild = async () => {
    const build = live();
    if (!build) throw new StoreUnavailableError(`records store ${bucket.name} unavailable: no live build read yet`);
    return build;
  };
  // A build's objects never change, so its checkpoint is read once per live build (every tile
  // request asks for it, to serve only the tiles it covers); a failed read is not kept.
  let checkpoint: { build: string; bytes: Promise<Buffer | null> } | null = null;
  const liveCheckpoint = async () => {
    const build = await liveBuild();
    if (checkpoint?.build !== build) {
      const read = { build, bytes: builds.read(build, BUILD_CHECKPOINT_FILE) };
      checkpoint = read;
      read.bytes.catch(() => {
        if (checkpoint === read) checkpoint = null;
      });
    }
    return checkpoint.bytes;
  };
  return {
    liveBuild,
    builds,
    logFile: async (path) => {
      // The live build's checkpoint is the log's: `mvr publish` swaps both with live.json.
      if (path === LOG_CHECKPOINT) return liveCheckpoint();
      let res;
      try {
        res = await bucket.get(`${BUCKET_LOG_PREFIX}${path}`);
      } catch (error) {
        throw new StoreUnavailableError(`records store ${bucket.name} unavailable: ${(error as Error).message}`);
      }
      if (res.statusCode === 404) return null;
      if (res.statusCode !== 200) throw new StoreUnavailableError(`records store ${bucket.name} answered ${res.statusCode} for ${BUCKET_LOG_PREFIX}${path}`);
      return res.body;
    },
    vkey: async () => builds.read(await liveBuild(), BUILD_LOG_VKEY_OBJECT),
  };
}
