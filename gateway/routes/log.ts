import { defineEventHandler } from 'h3';
import { parseCheckpoint, parseNote } from '#shared';
import { BuildNotFoundError, NotFoundError } from '../../core/errors/errors.ts';
import { strongEtag } from '../../core/etag.ts';
import { LOG_CHECKPOINT, LOG_DIR, LOG_VKEY_PATH } from '../../core/layout.ts';
import { parseTilePath, tileCovered } from '../../core/tlog/tiles.ts';
import { conditionalAnswer, sendAnswer } from '../answer.ts';
import { cacheHeaders } from '../cache-policy.ts';
import type { GatewayServices } from '../context.ts';
import { domainLookup } from '../query.ts';

/** Path prefix of the log's tiles and checkpoint (c2sp.org/tlog-tiles). */
export const LOG_PREFIX = `/${LOG_DIR}/`;

/**
 * `GET /log/checkpoint` and `GET /log/tile/...`: the public log, without a key, as the build wrote
 * it under public/log (or `mvr publish` put it in the bucket). Only the paths the tlog-tiles layout
 * names are served; a gateway on an http(s) origin serves its own public/log.
 */
export function logFilesRoute(services: GatewayServices) {
  return defineEventHandler(async (event) => {
    const path = (event.node.req.originalUrl ?? '/').split('?', 1)[0]!.slice(LOG_PREFIX.length);
    const isCheckpoint = path === LOG_CHECKPOINT;
    const tile = isCheckpoint ? null : parseTilePath(path);
    if (!isCheckpoint && !tile) throw new NotFoundError(`${LOG_PREFIX}${path}`);
    // The reads take a turn of the unauthenticated routes' budget; the answer is sent without one.
    const bytes = await services.publicBudget.run(async () => {
      const read = (name: string) => services.proofs.file(name);
      // A tile is served (and cached for a year) only once the published checkpoint commits to it.
      if (tile && !tileCovered(tile, checkpointSize(await read(LOG_CHECKPOINT)))) return null;
      return read(path);
    });
    if (!bytes) throw new NotFoundError(`${LOG_PREFIX}${path}`);
    const headers = isCheckpoint
      ? { 'content-type': 'text/plain; charset=utf-8', ...cacheHeaders('/log/checkpoint') }
      : { 'content-type': 'application/octet-stream', ...cacheHeaders('/log/tile/{path}') };
    return sendAnswer(event, conditionalAnswer(event, headers, strongEtag(bytes), bytes));
  });
}

/** The tree size a published checkpoint names; 0 when there is none or it cannot be read as one. */
function checkpointSize(note: Buffer | null): number {
  if (!note) return 0;
  try {
    return parseCheckpoint(parseNote(note.toString('utf8')).text).size;
  } catch {
    return 0;
  }
}

/** `GET /.well-known/merchant-verify-log.vkey`: the log's verifier key in signed-note form. */
export function logVkeyRoute(services: GatewayServices) {
  return defineEventHandler(async (event) => {
    const bytes = await services.publicBudget.run(() => services.proofs.vkey());
    if (!bytes) throw new NotFoundError(LOG_VKEY_PATH);
    const headers = { 'content-type': 'text/plain; charset=utf-8', ...cacheHeaders(LOG_VKEY_PATH) };
    return sendAnswer(event, conditionalAnswer(event, headers, strongEtag(bytes), bytes));
  });
}

/**
 * `GET /v1/proof?domain=` (key-gated, like the record): the C2SP tlog-proof of the domain's live
 * record; with `&build=ID`, of its record in that kept build, as `/v1/verify?build=` answers it
 * (an unknown or pruned build is 404 BUILD_NOT_FOUND).
 */
export function proofRoute(services: GatewayServices) {
  return defineEventHandler(async (event) => {
    const { domain, build } = await domainLookup(event, services);
    if (build !== undefined && !(await services.history.builds()).some((b) => b.id === build)) throw new BuildNotFoundError(build);
    const { proof } = await services.proofs.proofFor(domain, build);
    const bytes = Buffer.from(proof);
    const headers = { 'content-type': 'text/plain; charset=utf-8', ...cacheHeaders('/v1/proof') };
    return sendAnswer(event, conditionalAnswer(event, headers, strongEtag(bytes), bytes));
  });
}
