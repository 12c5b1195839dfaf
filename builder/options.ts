import type { WitnessReport } from '../witness/build-phase/witnessing.ts';
import type { CompactAnswersSummary } from './compact-answers.ts';
import type { LogSummary } from './log.ts';

// What a build is given and what it reports: shared by the build and its worker pool.

/** `mvr build --keep`: a year of monthly builds and the one before. */
export const DEFAULT_KEEP = 13;

export interface BuildOptions {
  auditsDir: string;
  recordsDir: string;
  publicDir: string;
  keysDir: string;
  issuer: string;
  schemaUrl: string;
  /** `issued_at` of every record, epoch ms (from `--now`, `SOURCE_DATE_EPOCH`, or the clock). */
  now: number;
  /** `MVR_SIGNING_KEY`: a private JWK that overrides keys/active. */
  signingKey?: string | undefined;
  /** `MVR_LOG_KEY`: the log key's text (a CI secret), overriding keys/log.key. */
  logKey?: string | undefined;
  /** A JWK Set file whose public keys stay listed (CI keeps earlier keys published this way). */
  publishKeysFile?: string | undefined;
  /** Worker threads signing the audits; 0 signs them on the build's own thread (by default, for up to a MiB of audits: ./sign-audits.ts). */
  workers?: number | undefined;
  batchSize?: number | undefined;
  /** Records a pack holds (`--pack-records`); by default chosen by the build's size (`recordsPerPackFor`). */
  packRecords?: number | undefined;
  /**
   * Records from which the index and map run in a thread of their own (default `INDEX_THREAD_FROM` of
   * ./index-thread.ts); below it they run on the build's thread. Tests lower it to run small builds in the thread.
   */
  indexThreadFrom?: number | undefined;
  /** Builds kept for history and the change feed, the new one included (default 13); at least 1. */
  keep?: number | undefined;
  /** `--tree`: also write one file a record (`<ab>/<domain>.json`) for people to read; nothing in the service reads it. */
  tree?: boolean | undefined;
  /** Publish even when there is no audit at all (normally refused: it would withdraw every record). */
  allowEmpty?: boolean | undefined;
  onProgress?: ((p: BuildProgress) => void) | undefined;
  /** Called as each phase starts, in BUILD_PHASES order (`changes` and `log` only when they run). */
  onPhase?: ((phase: BuildPhase) => void) | undefined;
  /** Aborted (Ctrl-C, SIGTERM): the build stops before it goes live, with INTERRUPTED; once live, it finishes. */
  signal?: AbortSignal | undefined;
  onWarning?: ((message: string) => void) | undefined;
  /** `--witness-policy`: a tlog-policy file; the build's checkpoint must be cosigned by its quorum before the build goes live. */
  witnessPolicy?: string | undefined;
  /** Called with each witness's answer. */
  onWitness?: ((report: WitnessReport) => void) | undefined;
}

/**
 * A build's phases, in order: the records signed and written (the only one that reads input),
 * the index, the domain map and its statement, the change feeds, the log, its witnesses (with a
 * policy), the key set and the page, the swap that makes the build live, and removing builds no
 * longer kept.
 */
export const BUILD_PHASES = ['records', 'index', 'map', 'changes', 'log', 'witness', 'key_set', 'swap', 'prune'] as const;
export type BuildPhase = (typeof BUILD_PHASES)[number];

export interface BuildProgress {
  records: number;
  bytesRead: number;
  /** Input bytes whose records are written (the workers are behind the reader): what an estimate of the time left is based on. */
  bytesDone: number;
  totalBytes: number;
  elapsedMs: number;
}

export interface BuildSummary {
  buildId: string;
  /** True when this very build (same id: same audits, keys, options and --now) was already live: nothing was written. */
  unchanged: boolean;
  records: number;
  byStatus: Record<string, number>;
  byTier: Record<string, number>;
  signed: boolean;
  keyId: string | null;
  publishedKeyIds: string[];
  issuedAt: string;
  files: number;
  /** Worker threads that signed the audits (0: the build's own thread). */
  workers: number;
  durationMs: number;
  /** Time spent in each phase that ran (ms); what `durationMs` holds besides them is the start (the lock, the inputs read), and `prune` comes after it. */
  phasesMs: Partial<Record<BuildPhase, number>>;
  recordsPerSecond: number;
  buildDir: string;
  keySetFile: string;
  prunedBuilds: number;
  /** Builds kept after this one, it included. */
  keptBuilds: number;
  /** Changes written to the feed, summed over the earlier kept builds compared against. */
  changes: number;
  /** The domain map and build statement: leaves hashed while the index is written, the map's root, the signed statement. */
  /** The domain map, and the compact private answers written from it (their one size, the fewest and most domains of a bucket). */
  domainMap: { durationMs: number; domains: number; bytes: number; answers?: CompactAnswersSummary };
  /** The packs: time spent sorting, hashing and writing them and their index, how many, their bytes. */
  packs: { durationMs: number; files: number; bytes: number; recordsPerPack: number };
  /** What the transparency log step did; null when there is no log key. */
  log: LogSummary | null;
  /** What each witness of the policy answered; null without a policy (or when nothing was appended). */
  witnesses: WitnessReport[] | null;
  /** Peak resident memory of the build process, workers included (MB). */
  peakRssMb: number;
}
