import { BUNDLE_SCHEMA_SUFFIX, type Bundle, domainHash, encodeBase64 } from '#shared';
import { sha256 } from '../core/crypto/hash.ts';
import type { ServedBuild } from './build-maps.ts';
import type { LogProofs } from './log-proofs.ts';
import type { RecordsService } from './records.ts';

/**
 * The offline bundle of a normalized domain (`GET /v1/bundle`, MCP): the live build's answer with
 * everything that proves it, made of the pieces the online routes answer with (the records service's
 * record or never-audited answer, the absence proof and statement proof of the log's proofs, the
 * domain map's inclusion path), all of one build. A build that goes live meanwhile is looked at
 * again; a store that keeps swapping builds is STORE_UNAVAILABLE.
 */
export function bundleFor(records: RecordsService, proofs: LogProofs, domain: string): Promise<Bundle> {
  return records.ofOneBuild(`the bundle of ${domain}`, (build) => bundleOf(records, proofs, build, domain));
}

async function bundleOf(records: RecordsService, proofs: LogProofs, build: ServedBuild, domain: string): Promise<Bundle> {
  const { found, index } = build.map.search(domainHash(sha256, domain));
  const served = await records.recordFor(domain);
  const record = JSON.parse(served.bytes.toString('utf8')) as Record<string, unknown>;
  const head = { schema: `https://${build.statement.issuer}${BUNDLE_SCHEMA_SUFFIX}`, domain, record };
  if (found) {
    const place = { index, leaf: encodeBase64(build.map.leaf(index)), path: build.map.inclusionPath(index).map(encodeBase64) };
    const statementProof = await proofs.liveStatementProof(build.statement);
    return { ...head, place, absence: null, statement: build.statement, statement_proof: statementProof };
  }
  // One statement proof for the absence and the bundle: the checkpoint is read once, so its cosignatures are the same.
  const absence = await proofs.absenceFor(domain);
  return { ...head, place: null, absence, statement: build.statement, statement_proof: absence.statement_proof ?? null };
}
