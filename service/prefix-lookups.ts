import { domainHash, paddedPart } from '#shared';
import { sha256 } from '../core/crypto/hash.ts';
import { InvalidPrefixError, RecordUnavailableError } from '../core/errors/errors.ts';
import { INDEX_FILE } from '../core/layout.ts';
import { CACHE_LIMITS } from '../core/limits.ts';
import type { BuildMap } from './build-maps.ts';
import type { LogProofs } from './log-proofs.ts';
import type { RecordsService } from './records.ts';

/**
 * Prefix lookups (`GET /v1/lookup/{prefix}`): every record of the live build whose domain hash
 * starts with the prefix, the map's run of leaves for it with its range proof, and padding to
 * the one size the build signed. The domains of the run come from the build's index, hashed once
 * per build into map order; the records through the records service, so each is served only
 * once it passes the serve rule, as for `/v1/verify`. An answer is all of one build: one assembled
 * while another build went live is made again. Nothing here is told which domain a caller wants:
 * only the prefix.
 */
export class PrefixLookups {
  /** The live build's domains in map order, made once per build. */
  private ordered: { build: string; domains: Promise<string[]> } | null = null;
  /**
   * Assembled answers of one build by prefix, least recently used first: a prefix's answer is the
   * same for every caller until the build changes, and then none of them is served again, so a
   * new build drops them all. Each counts the size its build signed for every answer (its JSON),
   * so what is kept is bounded by bytes whatever the build's prefix length or record count.
   */
  private answers: { build: string; byPrefix: Map<string, Promise<Record<string, unknown>>>; bytes: number } = {
    build: '',
    byPrefix: new Map(),
    bytes: 0,
  };

  constructor(
    private readonly records: RecordsService,
    private readonly proofs: LogProofs,
    /** Bytes of assembled answers kept (CACHE_LIMITS.prefixAnswerBytes; a setting tests lower). */
    private readonly maxBytes: number = CACHE_LIMITS.prefixAnswerBytes,
  ) {}

  /** What the answer cache holds now: its build, its answers and their bytes (as the build signed them), and its bound. */
  stats(): { build: string | null; answers: number; bytes: number; limitBytes: number } {
    const a = this.answers;
    return { build: a.build || null, answers: a.byPrefix.size, bytes: a.bytes, limitBytes: this.maxBytes };
  }

  /** The answer for `prefix` in the live build (INVALID_PREFIX when it is not lowercase hex of the build's length). */
  answerFor(prefix: string): Promise<Record<string, unknown>> {
    return this.records.ofOneBuild(`the answer for prefix ${prefix}`, (m) => this.answerIn(m, prefix));
  }

  private async answerIn(m: BuildMap, prefix: string): Promise<Record<string, unknown>> {
    const lookup = m.statement.lookup;
    if (!lookup) throw new RecordUnavailableError(`build ${m.build} has no prefix lookups (built before them): build again to serve them`);
    if (prefix.length !== lookup.prefix_length || !/^[0-9a-f]+$/.test(prefix))
      throw new InvalidPrefixError(`the prefix must be ${lookup.prefix_length} lowercase hex digits of SHA-256 of the normalized domain`);
    const answer = await this.kept(m, prefix, lookup.answer_bytes);
    const statementProof = await this.proofs.liveStatementProof(m.statement);
    return statementProof === null ? answer : { ...answer, statement_proof: statementProof };
  }

  /** The answer for `prefix` from the cache, or assembled and kept while it fits (a failure is not kept). */
  private kept(m: BuildMap, prefix: string, answerBytes: number): Promise<Record<string, unknown>> {
    if (this.answers.build !== m.build) this.answers = { build: m.build, byPrefix: new Map(), bytes: 0 };
    const cache = this.answers;
    const known = cache.byPrefix.get(prefix);
    if (known) {
      // Most recently used last: a Map iterates in insertion order.
      cache.byPrefix.delete(prefix);
      cache.byPrefix.set(prefix, known);
      return known;
    }
    const made = this.assemble(m, prefix, answerBytes);
    if (answerBytes > this.maxBytes) return made;
    cache.byPrefix.set(prefix, made);
    cache.bytes += answerBytes;
    made.catch(() => {
      if (cache.byPrefix.get(prefix) !== made) return;
      cache.byPrefix.delete(prefix);
      cache.bytes -= answerBytes;
    });
    for (const oldest of cache.byPrefix.keys()) {
      if (cache.bytes <= this.maxBytes) break;
      cache.byPrefix.delete(oldest);
      cache.bytes -= answerBytes;
    }
    return made;
  }

  private async assemble(m: BuildMap, prefix: string, answerBytes: number): Promise<Record<string, unknown>> {
    const run = m.map.prefixRun(prefix);
    const domains = await this.domainsOf(m);
    const records: unknown[] = [];
    for (let i = run.first; i < run.first + run.leaves.length; i++) {
      // The neighbours just outside the run are proof, not part of the answer's records.
      if (!hexOf(m.map.leaf(i)).startsWith(prefix)) continue;
      const served = await this.records.recordFor(domains[i]!);
      records.push(JSON.parse(served.bytes.toString('utf8')));
    }
    const part = { prefix, first: run.first, leaves: run.leaves, records, proof: run.proof, padding: '' };
    const pad = answerBytes - Buffer.byteLength(paddedPart(part));
    // The build signed a size that fits every prefix; an answer over it would tell its prefix by its size.
    if (pad < 0) throw new RecordUnavailableError(`the answer for prefix ${prefix} of build ${m.build} is over the size the build signed`);
    return { statement: m.statement, ...part, padding: ' '.repeat(pad) };
  }

  /** The live build's domains by map index, from its index file (each line names one domain). */
  private domainsOf(m: BuildMap): Promise<string[]> {
    if (this.ordered?.build !== m.build) {
      const domains = this.records.store.readFile(m.build, INDEX_FILE).then((bytes) => {
        if (!bytes) throw new RecordUnavailableError(`build ${m.build} has no ${INDEX_FILE}: its prefix lookups cannot be answered`);
        const byIndex = new Array<string>(m.map.size);
        let placed = 0;
        for (const line of bytes.toString('utf8').split('\n')) {
          if (!line) continue;
          const domain = (JSON.parse(line) as { domain: string }).domain;
          const { found, index } = m.map.search(domainHash(sha256, domain));
          if (found && byIndex[index] === undefined) placed++;
          if (found) byIndex[index] = domain;
        }
        if (placed !== m.map.size)
          throw new RecordUnavailableError(`build ${m.build}'s ${INDEX_FILE} does not list every domain of its map`);
        return byIndex;
      });
      domains.catch(() => {
        if (this.ordered?.domains === domains) this.ordered = null;
      });
      this.ordered = { build: m.build, domains };
    }
    return this.ordered.domains;
  }
}

function hexOf(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}
