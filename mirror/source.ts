import { mirrorGateway } from '../clients/mirror-gateway.ts';
import { AnswerTooLargeError, ConfigError, MirrorRefusedError, StoreUnavailableError } from '../core/errors/errors.ts';
import { readLimitOf } from '../core/limits.ts';
import { openStore, type StoreSettings } from '../storage/open.ts';
import { isS3 } from '../storage/url.ts';

/**
 * Where a mirror reads a build from: a bucket as `mvr publish` fills it, or a gateway's mirror
 * routes. Nothing read here is trusted: every byte is checked against the signed statement
 * before the mirror serves it (mirror/checks.ts).
 */
export interface MirrorSource {
  /** Where it is, for messages (never a secret). */
  readonly name: string;
  /** The live build's id, and the key set published with it. */
  live(): Promise<{ build: string; keySet: Buffer }>;
  /**
   * A file of a build, of at most `maxBytes` (the limits table's for its kind when not given);
   * null when there is none. A larger file is MIRROR_REFUSED, naming it, before a byte past the
   * bound is read: a gateway's answer by its Content-Length (or as the bytes come), a bucket's
   * object by its length (a HEAD), then read as one range of that length.
   */
  readFile(build: string, path: string, maxBytes?: number): Promise<Buffer | null>;
  /** At most `length` bytes of a build's file from byte `start` (fewer at its end); null when there is none. */
  readRange(build: string, path: string, start: number, length: number): Promise<Buffer | null>;
  /** A tile of the log (`tile/...`); null when there is none. */
  logFile(path: string): Promise<Buffer | null>;
  /** The log's verifier key, as published with the live build; null when there is none. */
  logVkey(): Promise<Buffer | null>;
  close(): Promise<void>;
}

/** How to reach the source: the bucket's settings (s3://), or the gateway's API key (http(s)). */
export interface SourceSettings {
  store?: StoreSettings;
  apiKey?: string;
}

/**
 * The source `from` names: `s3://BUCKET/PREFIX` read through the one Store interface, or a
 * gateway's base URL read through its mirror routes with an API key of the mirror scope.
 */
export function openMirrorSource(from: string, settings: SourceSettings): MirrorSource {
  if (isS3(from)) {
    if (!settings.store) throw new ConfigError(`${from}: no bucket settings`);
    return bucketSource(settings.store);
  }
  if (!settings.apiKey) throw new ConfigError(`${from}: a gateway is mirrored with an API key of the mirror scope (--api-key)`);
  const gateway = mirrorGateway(from, settings.apiKey);
  return {
    name: gateway.name,
    live: async () => {
      const { build } = await gateway.head();
      return { build, keySet: await gateway.keySet() };
    },
    readFile: async (build, path, maxBytes = readLimitOf(path).bytes) => {
      try {
        return await gateway.readFile(build, path, maxBytes);
      } catch (error) {
        if (error instanceof AnswerTooLargeError) throw tooLarge(build, path, gateway.name, maxBytes);
        throw error;
      }
    },
    readRange: gateway.readRange,
    logFile: gateway.logFile,
    logVkey: gateway.logVkey,
    close: async () => undefined,
  };
}

/** A bucket, through the Store interface: its live pointer names the build, whose key set travels with it. */
function bucketSource(settings: StoreSettings): MirrorSource {
  const store = openStore({ ...settings, bulk: true });
  return {
    name: store.name,
    live: async () => {
      await store.refresh();
      const build = store.liveBuild();
      if (!build) throw new StoreUnavailableError(store.describe().error ?? `${store.name} names no live build`);
      return { build, keySet: await store.keySet().read() };
    },
    readFile: async (build, path, maxBytes = readLimitOf(path).bytes) => {
      const size = await store.fileSize(build, path);
      if (size === null) return null;
      if (size > maxBytes) throw tooLarge(build, path, store.name, maxBytes);
      // One range of the length the HEAD gave: an object replaced meanwhile is still read no further.
      return size === 0 ? Buffer.alloc(0) : store.readRange(build, path, 0, size);
    },
    readRange: (build, path, start, length) => store.readRange(build, path, start, length),
    logFile: (path) => store.logFile(path),
    logVkey: () => store.logVkey(),
    close: () => store.close(),
  };
}

/** A build's file larger than a mirror may read of it. */
function tooLarge(build: string, path: string, where: string, maxBytes: number): MirrorRefusedError {
  return new MirrorRefusedError(
    `build ${build} refused: its ${path} at ${where} is larger than the ${maxBytes} bytes a mirror reads of it`,
  );
}
