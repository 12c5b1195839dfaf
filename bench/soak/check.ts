import { createHash } from 'node:crypto';
import { verifyRecord } from '@merchant-verify/verifier';
import { isErrorCode } from '../../core/errors/registry.ts';
import type { Exchange, Route, Verdict } from './exchange.ts';
import { inc, type KeySetCache, type Stats } from './stats.ts';
import type { Timeline } from './timeline.ts';
import type { Verification, VerifyPool } from './verify-pool.ts';

/**
 * Checks every answer against what it must be, and counts it. The rules:
 * - audited domain, 200: verifies with verifyRecord against the gateway's key set (refetched
 *   on UNKNOWN_KEY), is that domain's, not `unverified`, carries the issued_at, key_id and score
 *   of one of our builds, and not of a build older than the one live for a grace period already;
 *   never for a damaged record while it is damaged;
 * - never-audited domain, 200: `unverified`, that domain, unsigned, score null; never once the
 *   gateway can know the records folder is away ("we could not look" is not "never audited"):
 *   until its next look the live build's signed map still decides, so the grace a cached record has;
 * - bundle (`/v1/bundle`) or private lookup (`GET /v1/lookup`, then `/v1/lookup/{bits}/{hex}`), 200:
 *   verifyBundle, or verifyCompactAnswer against the statement read first, with the log's key and
 *   the witnesses' policy: an audited domain's holds (code null) and carries a record of one of our
 *   builds, checked as above (a compact answer: its entry, that domain's with its build's score); a
 *   never-audited domain's is its proven absence (NEVER_AUDITED); BUILD_SUPERSEDED (or, for a
 *   compact answer, PREFIX_MISMATCH: a bucket of the build after the statement's) only within the
 *   grace after a swap (the package's rule: look once more);
 * - invalid domain: 400 INVALID_DOMAIN; a bucket of other bits than the build's: 400
 *   PREFIX_LENGTH_MISMATCH; no or bad key: 401 UNAUTHORIZED with WWW-Authenticate;
 * - 503 STORE_UNAVAILABLE only for requests that read the store overlapping the outage (plus
 *   grace), 503 UNAVAILABLE only for a damaged domain during its damage (plus grace); any other
 *   5xx counts;
 * - every refusal (4xx, 5xx) carries a code the error registry has; each is counted by code.
 */
export class Checker {
  /** Verdicts by (key set version, domain, SHA-256 of the bytes): identical bytes are verified once per key set. */
  private memo = new Map<string, Promise<Verification>>();

  constructor(
    private readonly timeline: Timeline,
    private readonly keys: KeySetCache,
    readonly stats: Stats,
    private readonly pool: VerifyPool,
  ) {}

  async record(ex: Exchange): Promise<Verdict> {
    const verdict = await this.judge(ex).catch(
      (error: Error): Verdict => ({ outcome: 'wrong', reason: `checker failed: ${error.message}` }),
    );
    const s = this.stats;
    s.total++;
    if (ex.retriedAfter) inc(s.retried, ex.retriedAfter);
    const label = ex.status === 0 ? 'no answer' : ex.status >= 400 ? `${ex.status} ${problemCode(ex.body)}` : String(ex.status);
    inc(s.byStatus, label);
    const kindMap = s.byKind.get(ex.planned.kind) ?? new Map<string, number>();
    s.byKind.set(ex.planned.kind, kindMap);
    inc(kindMap, label);
    const routeMap = s.byRoute.get(ex.planned.route) ?? new Map<string, number>();
    s.byRoute.set(ex.planned.route, routeMap);
    inc(routeMap, verdict.outcome);
    if (ex.status >= 400) inc(s.refusals, problemCode(ex.body));
    if (verdict.outcome !== 'ok' && verdict.outcome !== 'expected-refusal') {
      s.count(verdict.outcome, verdict.reason ?? label);
      if (verdict.outcome !== 'expected-503' && s.examples.length < 25) {
        s.examples.push({
          outcome: verdict.outcome,
          reason: verdict.reason ?? label,
          kind: ex.planned.kind,
          route: ex.planned.route,
          path: ex.planned.path.slice(0, 160),
          status: ex.status,
          startMs: this.timeline.rel(ex.start),
          endMs: this.timeline.rel(ex.end),
          body: (ex.error ?? ex.body).slice(0, 300),
        });
      }
    }
    return verdict;
  }

  private async judge(ex: Exchange): Promise<Verdict> {
    const p = ex.planned,
      t = this.timeline;
    if (ex.status === 0) return { outcome: 'transport-error', reason: ex.error ?? 'no answer' };
    if (ex.status >= 400 && !isErrorCode(problemCode(ex.body)))
      return { outcome: 'wrong', reason: `refusal ${ex.status} with a code the registry does not have: ${problemCode(ex.body)}` };
    if (ex.status >= 500) {
      const code = problemCode(ex.body);
      // A private lookup reads the store even for a bucket it refuses (its bits are the live build's).
      const isRecordRequest = p.expect === 'record' || p.expect === 'unverified' || p.route === 'lookup';
      if (ex.status === 503 && code === 'STORE_UNAVAILABLE' && isRecordRequest && t.overlapsOutage(ex.start, ex.end)) {
        return { outcome: 'expected-503', reason: 'STORE_UNAVAILABLE while the records folder was away' };
      }
      if (ex.status === 503 && code === 'UNAVAILABLE' && p.domain && t.overlapsCorruption(p.domain, ex.start, ex.end)) {
        return { outcome: 'expected-503', reason: 'UNAVAILABLE for the damaged record' };
      }
      return { outcome: 'unexpected-5xx', reason: `${ex.status} ${code} (${p.kind})` };
    }
    switch (p.expect) {
      case 'invalid': {
        const code = p.route === 'lookup' ? 'PREFIX_LENGTH_MISMATCH' : 'INVALID_DOMAIN';
        if (ex.status === 400 && problemCode(ex.body) === code && ex.contentType.startsWith('application/problem+json'))
          return { outcome: 'ok' };
        return {
          outcome: 'wrong',
          reason: `invalid ${p.route === 'lookup' ? 'bits' : 'domain'} answered ${ex.status} ${problemCode(ex.body)}`,
        };
      }
      case 'unauthorized': {
        if (ex.status !== 401 || problemCode(ex.body) !== 'UNAUTHORIZED')
          return { outcome: 'wrong', reason: `request without a valid key answered ${ex.status} ${problemCode(ex.body)}` };
        // A Bearer token that is not a live key is invalid_token (RFC 6750); no key or another scheme is a bare challenge.
        const tokenSent = /^bearer[ \t]+\S/i.test(p.authorization ?? '');
        if (!/^Bearer realm=/.test(ex.wwwAuthenticate) || ex.wwwAuthenticate.includes('error="invalid_token"') !== tokenSent) {
          return { outcome: 'wrong', reason: `401 with WWW-Authenticate "${ex.wwwAuthenticate}" (token sent: ${tokenSent})` };
        }
        return { outcome: 'ok' };
      }
      case 'unverified':
        return p.route === 'verify' ? this.judgeUnverified(ex) : this.judgeProven(ex);
      case 'record':
        return p.route === 'verify' ? this.judgeRecord(ex) : this.judgeProven(ex);
    }
  }

  /** A bundle or a private lookup: the package's verifier decides, then the record it carries is checked as a plain one is. */
  private async judgeProven(ex: Exchange): Promise<Verdict> {
    const p = ex.planned,
      t = this.timeline,
      domain = p.domain!;
    const what = p.route === 'bundle' ? 'bundle' : 'private lookup';
    if (ex.status !== 200) return { outcome: 'wrong', reason: `${what} of a valid domain answered ${ex.status} ${problemCode(ex.body)}` };
    const compact = p.route === 'lookup';
    if (compact ? !ex.contentType.startsWith('application/octet-stream') : !parseRecord(ex))
      return {
        outcome: 'wrong',
        reason: `${what} 200 is not ${compact ? 'application/octet-stream' : 'a JSON object (or not application/json)'}`,
      };
    const v = await this.verify(p.route, compact ? JSON.stringify({ head: ex.head, bytes: ex.body }) : ex.body, domain);
    // The package's rule for a statement that is no longer its checkpoint's last entry, or a bucket of a newer
    // build than the statement read first: look once more. Right only around a swap.
    const lookAgain = v.code === 'BUILD_SUPERSEDED' || (compact && v.code === 'PREFIX_MISMATCH');
    if (lookAgain && t.nearSwap(ex.start, ex.end)) {
      return { outcome: 'expected-refusal', reason: `${what}: ${v.code} around a build swap (the client looks once more)` };
    }
    if (p.expect === 'unverified') {
      if (v.code !== 'NEVER_AUDITED')
        return { outcome: 'wrong', reason: `${what} of a never-audited domain verifies as ${v.code ?? 'a record'}, not NEVER_AUDITED` };
      if (t.insideOutage(ex.start, ex.end, t.graceMs))
        return { outcome: 'wrong', reason: `${what}: absence answered more than ${t.graceMs} ms into the records outage` };
      if (t.insideOutage(ex.start, ex.end)) this.stats.neverAuditedWhileAway++;
      return { outcome: 'ok' };
    }
    if (v.code !== null) return { outcome: 'wrong', reason: `${what} of an audited domain does not verify: ${v.code}` };
    return compact ? this.judgeEntry(ex, v.answer ?? {}) : this.judgeBuildRecord(ex, v.answer ?? {});
  }

  /** A proven entry of an audited domain (with its statement's issued_at): of that domain and one of our builds' scores, not stale, not served from a store that is away. */
  private judgeEntry(ex: Exchange, entry: Record<string, unknown>): Verdict {
    const t = this.timeline,
      domain = ex.planned.domain!;
    if (entry.domain !== domain) return { outcome: 'wrong', reason: 'entry of another domain', record: entry };
    const build = t.buildByIssuedAt(entry.issued_at);
    if (!build) return { outcome: 'wrong', reason: 'compact answer of a statement with the issued_at of no build', record: entry };
    const index = this.indexOf(domain);
    if (index === undefined || entry.score !== build.scores[index])
      return { outcome: 'wrong', reason: `entry differs from build "${build.label}" (score ${String(entry.score)})`, record: entry };
    if (build.index < t.oldestAcceptableBuild(ex.start))
      return {
        outcome: 'wrong',
        reason: `stale: build "${build.label}" served more than ${t.graceMs} ms after a newer build was swapped in`,
        record: entry,
      };
    if (t.insideOutage(ex.start, ex.end, t.graceMs))
      return {
        outcome: 'wrong',
        reason: `entry answered 200 more than ${t.graceMs} ms into the records outage (STORE_UNAVAILABLE expected)`,
        record: entry,
      };
    if (t.insideOutage(ex.start, ex.end)) this.stats.validWhileAway++;
    return { outcome: 'ok', record: entry };
  }

  private judgeUnverified(ex: Exchange): Verdict {
    const p = ex.planned;
    if (ex.status !== 200) return { outcome: 'wrong', reason: `never-audited domain answered ${ex.status} ${problemCode(ex.body)}` };
    const rec = parseRecord(ex);
    if (!rec) return { outcome: 'wrong', reason: 'never-audited 200 is not a JSON object (or not application/json)' };
    if (rec.domain !== p.domain) return { outcome: 'wrong', reason: 'never-audited 200 for another domain', record: rec };
    if (rec.status !== 'unverified' || rec.score !== null || rec.tier !== null || rec.last_audited_at !== null) {
      return { outcome: 'wrong', reason: `never-audited 200 is not an unverified record (status ${String(rec.status)})`, record: rec };
    }
    // The gateway runs without --sign-unverified, so the answer is unsigned: UNSIGNED, never a pass.
    const v = verifyRecord(rec, this.keys.keySet ?? { keys: [] }, { domain: p.domain! });
    if (v.valid || v.code !== 'UNSIGNED')
      return { outcome: 'wrong', reason: `never-audited 200 verifies as ${v.valid ? 'valid' : v.code}, expected UNSIGNED`, record: rec };
    // The live build's signed map, in memory, decides absence without a read; the gateway learns that the folder went
    // away at its next look (a poll, or a listed record's failed read). Until then the map is still the live build's
    // truth, as a cached record is: the same grace. After it, "we could not look" must be STORE_UNAVAILABLE.
    const t = this.timeline;
    if (t.insideOutage(ex.start, ex.end, t.graceMs)) {
      return {
        outcome: 'wrong',
        reason: `never-audited record synthesized more than ${t.graceMs} ms into the records outage (STORE_UNAVAILABLE expected)`,
        record: rec,
      };
    }
    if (t.insideOutage(ex.start, ex.end)) this.stats.neverAuditedWhileAway++;
    return { outcome: 'ok', record: rec };
  }

  private async judgeRecord(ex: Exchange): Promise<Verdict> {
    const p = ex.planned,
      domain = p.domain!;
    if (ex.status !== 200) return { outcome: 'wrong', reason: `audited domain answered ${ex.status} ${problemCode(ex.body)}` };
    const rec = parseRecord(ex);
    if (!rec) return { outcome: 'wrong', reason: 'audited 200 is not a JSON object (or not application/json)' };
    if (rec.status === 'unverified')
      return { outcome: 'wrong', reason: 'audited domain answered with a synthesized unverified record', record: rec };
    const v = await this.verify('verify', ex.body, domain);
    if (v.code !== null) return { outcome: 'wrong', reason: `audited 200 does not verify: ${v.code}`, record: rec };
    return this.judgeBuildRecord(ex, rec);
  }

  /** A verified record of an audited domain: of that domain, of one of our builds (content and key), not stale, not damaged, not served from a store that is away. */
  private judgeBuildRecord(ex: Exchange, rec: Record<string, unknown>): Verdict {
    const t = this.timeline,
      domain = ex.planned.domain!;
    if (rec.domain !== domain) return { outcome: 'wrong', reason: 'record of another domain', record: rec };
    const build = t.buildByIssuedAt(rec.issued_at);
    if (!build) return { outcome: 'wrong', reason: 'audited 200 carries the issued_at of no build', record: rec };
    if (rec.key_id !== build.keyId)
      return { outcome: 'wrong', reason: `record of build "${build.label}" signed by another key`, record: rec };
    const index = this.indexOf(domain);
    if (index === undefined || rec.score !== build.scores[index]) {
      return { outcome: 'wrong', reason: `record content differs from build "${build.label}" (score ${String(rec.score)})`, record: rec };
    }
    if (build.index < t.oldestAcceptableBuild(ex.start)) {
      return {
        outcome: 'wrong',
        reason: `stale: build "${build.label}" served more than ${t.graceMs} ms after a newer build was swapped in`,
        record: rec,
      };
    }
    if (t.insideCorruption(domain, ex.start, ex.end)) return { outcome: 'wrong', reason: 'damaged record answered 200', record: rec };
    if (t.insideOutage(ex.start, ex.end, t.graceMs)) {
      return {
        outcome: 'wrong',
        reason: `record answered 200 more than ${t.graceMs} ms into the records outage (STORE_UNAVAILABLE expected)`,
        record: rec,
      };
    }
    if (t.insideOutage(ex.start, ex.end)) this.stats.validWhileAway++;
    this.stats.maxOldBuildLagMs = Math.max(this.stats.maxOldBuildLagMs, Math.round(t.lagBehind(build.index, ex.start)));
    return { outcome: 'ok', record: rec };
  }

  /** Domain -> index in the audits, for the expected score (set by the runner). */
  indexOf: (domain: string) => number | undefined = () => undefined;

  /**
   * The package's verifier for the route against the client's key set. On UNKNOWN_KEY (for a bundle
   * or a private lookup, on any failure: the statement's key may be the one missing), refetch the
   * key set once and retry.
   */
  private async verify(route: Route, body: string, domain: string): Promise<Verification> {
    if (this.keys.keySet === null) await this.keys.refresh(this.keys.version);
    const digest = createHash('sha256').update(body).digest('base64url');
    for (let attempt = 0; ; attempt++) {
      const version = this.keys.version;
      const key = `${version}\u0000${route}\u0000${domain}\u0000${digest}`;
      let pending = this.memo.get(key);
      if (!pending) {
        this.stats.verifications++;
        if (this.memo.size >= 200_000) this.memo.clear();
        pending = this.pool.verify(route, body, domain, this.keys.keySet, version);
        this.memo.set(key, pending);
        // A failed verification run (worker gone) is not a verdict: never remember it.
        pending.catch(() => this.memo.delete(key));
      }
      const v = await pending;
      if (v.code === null && attempt > 0) this.stats.verifiedAfterRefetch++;
      const retry = route === 'verify' ? v.code === 'UNKNOWN_KEY' : v.code !== null && v.code !== 'NEVER_AUDITED';
      if (!retry || attempt > 0) return v;
      this.stats.unknownKeyRefetches++;
      await this.keys.refresh(version);
    }
  }
}

function parseRecord(ex: Exchange): Record<string, unknown> | null {
  if (!ex.contentType.startsWith('application/json')) return null;
  try {
    const value: unknown = JSON.parse(ex.body);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

export function problemCode(body: string): string {
  try {
    const code = (JSON.parse(body) as { code?: unknown }).code;
    return typeof code === 'string' ? code : 'no code';
  } catch {
    return 'no code';
  }
}
