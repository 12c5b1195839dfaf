/**
 * Clients that keep asking a test gateway for records while something changes under it (a key
 * rotation, a new build) and check every answer as a caller would: a record with the verifier
 * against the key set the gateway serves (fetched again when a record names a key it lacks), a
 * never-audited answer by its absence proof. Each client stops when told or after `maxEach`
 * requests, whichever comes first: bounded in count, never in time.
 */
import { type RecordVerification, verifyAbsence, verifyRecord } from '@merchant-verify/verifier';
import type { Reply, TestGateway } from './gateway.ts';

export interface VerifyingClients {
  /** Answers checked so far. */
  readonly answers: () => number;
  /** Every answer that was not a 200 with a record (or proof) that verifies, described. */
  readonly failures: string[];
  /** Stops the clients and waits for their last answers. */
  stop(): Promise<void>;
}

/**
 * Starts `count` clients over `g`. Each asks in turn for a hot record (one of `known`, asked again
 * and again, so cached), a record not asked before by this client in this run (`known` from the
 * other end: the first read of a new build), and a never-audited domain no one asked before.
 */
export function startVerifyingClients(g: TestGateway, known: string[], { count = 8, maxEach = 2000, tag = 'run' } = {}): VerifyingClients {
  let stopped = false;
  let answers = 0;
  const verdicts = new RecordVerdicts();
  const failures: string[] = [];
  // A key set that cannot be fetched is an empty one: the answers checked against it then fail, as they should.
  const fetchOrEmpty = () => fetchKeySet(g).catch(() => ({ keys: [] }));
  let keySet: Promise<unknown> = fetchOrEmpty();
  const refetchKeySet = () => (keySet = fetchOrEmpty());

  const checkRecord = async (domain: string, r: Reply) => {
    if (r.status !== 200) return `${domain}: ${r.status} ${r.text.slice(0, 600)}`;
    let result = verdicts.of(domain, r, await keySet);
    if (!result.valid && result.code === 'UNKNOWN_KEY') result = verdicts.of(domain, r, await refetchKeySet());
    return result.valid ? null : `${domain}: does not verify (${result.code}: ${result.message})`;
  };
  const checkNeverAudited = async (domain: string, r: Reply) => {
    if (r.status !== 200 || r.json?.status !== 'unverified') return `${domain}: ${r.status} ${r.text.slice(0, 600)}`;
    const proof = await g.request(`/v1/absence?domain=${domain}`);
    if (proof.status !== 200) return `${domain} absence: ${proof.status} ${proof.text.slice(0, 600)}`;
    let result = verifyAbsence(proof.json, domain, await keySet);
    // A proof's statement may be signed by a key newer than the key set fetched so far.
    if (!result.valid) result = verifyAbsence(proof.json, domain, await refetchKeySet());
    return result.valid ? null : `${domain} absence: does not verify (${result.code})`;
  };

  const client = async (c: number) => {
    for (let n = 0; n < maxEach && !stopped; n++) {
      const kind = n % 3;
      const domain =
        kind === 0
          ? known[(c + n) % known.length]!
          : kind === 1
            ? known[known.length - 1 - (Math.floor(n / 3) % known.length)]!
            : `never-${tag}-${c}-${n}.example`;
      const failure = await g.verify(domain).then(
        (r) => (kind === 2 ? checkNeverAudited(domain, r) : checkRecord(domain, r)),
        (error: Error) => `${domain}: ${error.message}`,
      );
      answers++;
      if (failure) failures.push(failure);
    }
  };
  const running = Promise.all(Array.from({ length: count }, (_, c) => client(c)));
  return {
    answers: () => answers,
    failures,
    async stop() {
      stopped = true;
      await running;
    },
  };
}

/**
 * The verifier's verdict on a record, remembered: whether a record verifies depends on its bytes,
 * the domain asked for and the key set alone, so a record byte for byte the same as one already
 * checked against the same key set gets that verdict again without a second Ed25519 check. Most
 * answers are the same hot records, and checking each one again was a third of the rotation
 * test's CPU (decision 0055); every answer that differs in any byte is still verified.
 */
class RecordVerdicts {
  private readonly byKeySet = new WeakMap<object, Map<string, RecordVerification>>();

  of(domain: string, r: Reply, keySet: unknown): RecordVerification {
    let seen = this.byKeySet.get(keySet as object);
    if (!seen) this.byKeySet.set(keySet as object, (seen = new Map()));
    const answer = `${domain}\n${r.text}`;
    let verdict = seen.get(answer);
    if (!verdict) seen.set(answer, (verdict = verifyRecord(r.json, keySet, { domain })));
    return verdict;
  }
}

async function fetchKeySet(g: TestGateway): Promise<unknown> {
  const r = await g.request('/.well-known/merchant-verify-keys.json', { key: null });
  if (r.status !== 200) throw new Error(`key set: ${r.status}`);
  return r.json;
}
