/**
 * The HTTP front door of the real gateway, attacked on one loopback port with real built records:
 *
 * 1. size limits of the request head (size-limits.ts),
 * 2. slow clients / slowloris (slow-clients.ts),
 * 3. repeated and encoded `domain` parameters, hostile host spellings (params.ts),
 * 4. request-smuggling-shaped requests over raw TCP (smuggling.ts),
 * 5. a fast-check fuzz of methods, targets, queries, credentials and headers (fuzz.ts).
 *
 * One gateway for all of them: the slow clients open their connections as soon as it starts and
 * hold them while every other suite runs (so "other clients are served meanwhile" is tested by
 * all of them), and the slow-client assertions, which wait for Node's 30 s connection check,
 * come last; the waiting overlaps the rest instead of adding to it.
 */
import { afterAll, beforeAll } from 'vitest';
import { cleanup, expectNoSecretsInLogs, makeProject, startTestGateway } from '../gateway/helpers.ts';
import type { FrontDoor } from './checks.ts';
import { liveRecordBytes } from './files.ts';
import { fuzzSuite } from './fuzz.ts';
import { paramsSuite } from './params.ts';
import { sizeLimitSuite } from './size-limits.ts';
import { slowClientSuite, startSlowClients, stopSlowClients } from './slow-clients.ts';
import { smugglingSuite } from './smuggling.ts';

let shared: FrontDoor | undefined;
const get = (): FrontDoor => {
  if (!shared) throw new Error('the front-door gateway did not start');
  return shared;
};

beforeAll(async () => {
  const project = await makeProject();
  const g = await startTestGateway(project);
  shared = { g, records: await liveRecordBytes(project.recordsDir) };
  startSlowClients(shared);
});

afterAll(async () => {
  stopSlowClients();
  try {
    if (shared) expectNoSecretsInLogs(shared.g);
  } finally {
    await cleanup();
  }
});

sizeLimitSuite(get);
paramsSuite(get);
smugglingSuite(get);
fuzzSuite(get);
slowClientSuite(get); // last: it waits for the slow clients to be closed
