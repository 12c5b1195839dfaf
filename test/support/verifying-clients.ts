/**
 * Clients that keep asking a test gateway for records while something changes under it (a key
 * rotation, a new build) and check every answer as a caller would: a record with the verifier
 * against the key set the gateway serves (fetched again when a record names a key it lacks), a
 * never-audited answer by its absence proof. Each client stops when told or after `maxEach`
 * requests, whichever comes first: bounded in count, never in time.
 */
import { type AbsenceResult, parseKeySet, type RecordVerification, verifyRecord } from '@merchant-verify/verifier';
import { sha256 } from '@noble/hashes/sha2.js';
import { createAbsenceVerifier, type Ed25519Verify, nobleEd25519Verify } from '#shared';
import type { Reply, TestGateway } from './gateway.ts';

/** The kinds of question each client asks in turn: a hot record, a cold one, a never-audited domain. */
const KINDS = 3;

export interface VerifyingClients {
  /** Answers checked so far. */
  readonly answers: () => number;
  /** Every answer that was not a 200 with a record (or proof) that verifies, described. */
  readonly failures: string[];
  /** The key ids of the records that verified. */
  readonly keyIds: Set<string>;
  /** Settles once every client has had one answer of each kind checked. */
  readonly firstRound: Promise<void>;
  /** Lets clients started `held` ask on, as fast as their answers come. */
  go(): void;
  /** Stops the clients and waits for their last answers. */
  stop(): Promise<void>;
}

/**
 * Starts `count` clients over `g`. Each asks in turn for a hot record (one of `known`, asked again
 * and again, so cached), a record not asked before by this client in this run (`known` from the
 * other end: the first read of a new build), and a never-audited domain no one asked before.
 * `held` clients ask one of each kind, then wait for {@link VerifyingClients.go}: the load is put
 * on the gateway when the change it is about begins, not while nothing it serves changes.
 */
export function startVerifyingClients(
  g: TestGateway,
  known: string[],
  { count = 8, maxEach = 2000, tag = 'run', held = false } = {},
): VerifyingClients {
  let stopped = false;
  let answers = 0;
  let go = () => {};
  const released = held ? new Promise<void>((resolve) => (go = resolve)) : Promise.resolve();
  const failures: string[] = [];
  const keyIds = new Set<string>();
  // A key set that cannot be fetched is an empty one: the answers checked against it then fail, as they should.
  const fetchOrEmpty = () => fetchKeySet(g).catch(() => ({ text: '', json: { keys: [] } }));
  let keySet: Promise<FetchedKeySet> = fetchOrEmpty();
  const refetchKeySet = () => (keySet = fetchOrEmpty());

  const checkRecord = async (domain: string, r: Reply) => {
    if (r.status !== 200) return `${domain}: ${r.status} ${r.text.slice(0, 600)}`;
    let result = verdicts.of(domain, r, await keySet);
    if (!result.valid && result.code === 'UNKNOWN_KEY') result = verdicts.of(domain, r, await refetchKeySet());
    if (result.valid) keyIds.add(result.keyId);
    return result.valid ? null : `${domain}: does not verify (${result.code}: ${result.message})`;
  };
  const checkNeverAudited = async (domain: string, r: Reply) => {
    if (r.status !== 200 || r.json?.status !== 'unverified') return `${domain}: ${r.status} ${r.text.slice(0, 600)}`;
    const proof = await g.request(`/v1/absence?domain=${domain}`);
    if (proof.status !== 200) return `${domain} absence: ${proof.status} ${proof.text.slice(0, 600)}`;
    let result = verifyAbsence(proof.json, domain, (await keySet).json);
    // A proof's statement may be signed by a key newer than the key set fetched so far.
    if (!result.valid) result = verifyAbsence(proof.json, domain, (await refetchKeySet()).json);
    return result.valid ? null : `${domain} absence: does not verify (${result.code})`;
  };

  const ask = async (c: number, n: number) => {
    const kind = n % KINDS;
    const domain =
      kind === 0
        ? known[(c + n) % known.length]!
        : kind === 1
          ? known[known.length - 1 - (Math.floor(n / KINDS) % known.length)]!
          : `never-${tag}-${c}-${n}.example`;
    const failure = await g.verify(domain).then(
      (r) => (kind === 2 ? checkNeverAudited(domain, r) : checkRecord(domain, r)),
      (error: Error) => `${domain}: ${error.message}`,
    );
    answers++;
    if (failure) failures.push(failure);
  };
  const firstRounds = Array.from({ length: count }, async (_, c) => {
    for (let n = 0; n < KINDS; n++) await ask(c, n);
  });
  const running = Promise.all(
    firstRounds.map(async (first, c) => {
      await first;
      await released;
      for (let n = KINDS; n < maxEach && !stopped; n++) await ask(c, n);
    }),
  );
  return {
    answers: () => answers,
    failures,
    keyIds,
    firstRound: Promise.all(firstRounds).then(() => undefined),
    go: () => go(),
    async stop() {
      stopped = true;
      go();
      await running;
    },
  };
}

/** A key set as served: its exact text (what a verdict is remembered by) and its JSON. */
interface FetchedKeySet {
  text: string;
  json: unknown;
}

/**
 * The verifier's verdict on a record, remembered: whether a record verifies depends on its bytes,
 * the domain asked for and the key set alone, so a record byte for byte the same as one already
 * checked against a key set byte for byte the same gets that verdict again without a second
 * Ed25519 check. Most answers are the same hot records, and checking each one again was a third
 * of the rotation test's CPU (decision 0055); every answer that differs in any byte is still
 * verified. Kept for every clients' run of a test file: a rotation's clients start with the key
 * set and records the previous ones ended with (decision 0058).
 */
class RecordVerdicts {
  private readonly byKeySet = new Map<string, Map<string, RecordVerification>>();

  of(domain: string, r: Reply, keySet: FetchedKeySet): RecordVerification {
    let seen = this.byKeySet.get(keySet.text);
    if (!seen) this.byKeySet.set(keySet.text, (seen = new Map()));
    const answer = `${domain}\n${r.text}`;
    let verdict = seen.get(answer);
    if (!verdict) seen.set(answer, (verdict = verifyRecord(r.json, keySet.json, { domain })));
    return verdict;
  }
}

const verdicts = new RecordVerdicts();

/**
 * The package's Ed25519 primitive with its answers remembered: a pure function of the signature,
 * the message and the key, so the same three byte strings get the same answer without a second
 * check. Every never-audited domain asked is new, so no two absence proofs are alike, but within a
 * build they all carry the one build statement: its signature is checked once per build and key,
 * not once per proof (decision 0058).
 */
function rememberedEd25519(check: Ed25519Verify): Ed25519Verify {
  const seen = new Map<string, boolean>();
  const hex = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
  return (signature, message, publicKey, kid) => {
    const key = `${hex(publicKey)}:${hex(signature)}:${hex(message)}`;
    let valid = seen.get(key);
    if (valid === undefined) seen.set(key, (valid = check(signature, message, publicKey, kid)));
    return valid;
  };
}

/**
 * The package's absence check (`verifyAbsence` of its main entry point, without a log or witness
 * policy: the same steps, the same portable SHA-256 and Ed25519), every step run for every proof,
 * the Ed25519 step remembered.
 */
const checkAbsence = createAbsenceVerifier(sha256, rememberedEd25519(nobleEd25519Verify));
const verifyAbsence = (proof: unknown, domain: string, keySet: unknown): AbsenceResult => checkAbsence(proof, domain, parseKeySet(keySet));

async function fetchKeySet(g: TestGateway): Promise<FetchedKeySet> {
  const r = await g.request('/.well-known/merchant-verify-keys.json', { key: null });
  if (r.status !== 200) throw new Error(`key set: ${r.status}`);
  return { text: r.text, json: r.json };
}
