import { domainHash, paddedPart } from '@merchant-verify/verifier/internal/issuer';
import { InvalidPrefixError, RecordUnavailableError } from '../core/errors.ts';
import { sha256 } from '../core/hash.ts';
import { INDEX_FILE } from '../core/layout.ts';
import type { BuildMap } from './build-maps.ts';
import type { LogProofs } from './log-proofs.ts';
import type { RecordsService } from './records.ts';

/** Assembled answers kept, per (build, prefix): a prefix answer is the same for every caller until the build changes. */
const ANSWERS_KEPT = 256;

/**
 * Prefix lookups (`GET /v1/lookup/{prefix}`): every record of the live build whose domain hash
 * starts with the prefix, the map's run of leaves for it with its range proof, and padding to
 * the one size the build signed. The domains of the run come from the build's index, hashed once
 * per build into map order; the records through the records service, so each is served only
 * once it passes the serve rule, as for `/v1/verify`. Nothing here is told which domain a caller
 * wants: only the prefix.
 */
export class PrefixLookups {
  /** The live build's domains in map order, made once per build. */
  private ordered: { build: string; domains: Promise<string[]> } | null = null;
  private readonly answers = new Map<string, Promise<Record<string, unknown>>>();

  constructor(
    private readonly records: RecordsService,
    private readonly proofs: LogProofs,
  ) {}

  /** The answer for `prefix` in the live build (INVALID_PREFIX when it is not lowercase hex of the build's length). */
  async answerFor(prefix: string): Promise<Record<string, unknown>> {
    const m = await this.records.buildMap();
    const lookup = m.statement.lookup;
    if (!lookup) throw new RecordUnavailableError(`build ${m.build} has no prefix lookups (built before them): build again to serve them`);
    if (prefix.length !== lookup.prefix_length || !/^[0-9a-f]+$/.test(prefix))
      throw new InvalidPrefixError(`the prefix must be ${lookup.prefix_length} lowercase hex digits of SHA-256 of the normalized domain`);
    const key = `${m.build}:${prefix}`;
    let made = this.answers.get(key);
    if (!made) {
      made = this.assemble(m, prefix, lookup.answer_bytes);
      this.answers.set(key, made);
      made.catch(() => this.answers.delete(key));
      if (this.answers.size > ANSWERS_KEPT) this.answers.delete(this.answers.keys().next().value!);
    }
    const answer = await made;
    const statementProof = await this.proofs.liveStatementProof(m.statement);
    return statementProof === null ? answer : { ...answer, statement_proof: statementProof };
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
