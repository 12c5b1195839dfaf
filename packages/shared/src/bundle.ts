/**
 * The offline bundle (`GET /v1/bundle?domain=`): one JSON document that proves an answer without
 * another request, as a Sigstore bundle does. What it holds is what the three online requests
 * (`/v1/verify`, `/v1/absence`, the statement's log proof) answer, side by side, plus the record's
 * place in the build's domain map, so the build's statement commits to the very record.
 */
import type { AbsenceProof, BuildStatement } from './absence.ts';
import type { MapNeighbour } from './domain-map.ts';

/** The bundle's schema address, beside the record's: `https://{issuer}/schemas/bundle/v1`. */
export const BUNDLE_SCHEMA_SUFFIX = '/schemas/bundle/v1';

/** One offline bundle. Every member is what the online route it stands for answers. */
export interface Bundle {
  schema: string;
  /** The normalized domain asked. */
  domain: string;
  /** The signed record exactly as `GET /v1/verify` serves it, or the never-audited answer. */
  record: Record<string, unknown>;
  /** The record's leaf in the statement's domain map, with its RFC 9162 inclusion path; null for a never-audited answer. */
  place: MapNeighbour | null;
  /** For a never-audited answer, its absence proof exactly as `GET /v1/absence` answers it; null for a record. */
  absence: AbsenceProof | null;
  /** The build's signed statement. */
  statement: BuildStatement;
  /** The statement's entry in the log: a C2SP tlog-proof whose checkpoint carries its cosignatures; null when the store keeps no log. */
  statement_proof: string | null;
}
