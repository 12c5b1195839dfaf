/**
 * The HTTP front door of the real gateway, attacked on one loopback port with real built records
 * (the suites are in test/support/security/, over the raw client of test/support/raw-http.ts):
 *
 * 1. size limits of the request head (size-limits.ts),
 * 2. slow clients / slowloris (slow-clients.ts),
 * 3. repeated and encoded `domain` parameters, hostile host spellings (params.ts, params-unicode.ts),
 * 4. request-smuggling-shaped requests over raw TCP (smuggling.ts, smuggling-framed.ts),
 * 5. a fast-check fuzz of methods, targets, queries, credentials and headers (fuzz.ts).
 *
 * One gateway for all of them: the slow clients open their connections as soon as it starts and
 * hold them while every other suite runs (so "other clients are served meanwhile" is tested by
 * all of them; its head timeout is set far above the file's run time so they surely are), and
 * the slow-client assertions come last. How the timeouts close slow clients is checked on a
 * second gateway with the timeouts shortened, so nothing waits out the 10 s default.
 */
import { afterAll, beforeAll } from 'vitest';
import { cleanup, startTestGateway } from '../support/gateway.ts';
import { expectNoSecretsInLogs } from '../support/gateway-expect.ts';
import { liveRecords } from '../support/outputs.ts';
import { makeProject } from '../support/project.ts';
import type { FrontDoor } from '../support/security/checks.ts';
import { fuzzSuite } from '../support/security/fuzz.ts';
import { paramsSuite } from '../support/security/params.ts';
import { paramsUnicodeSuite } from '../support/security/params-unicode.ts';
import { sizeLimitSuite } from '../support/security/size-limits.ts';
import { FRONT_DOOR_TIMEOUTS, slowClientSuite, startSlowClients, stopSlowClients } from '../support/security/slow-clients.ts';
import { smugglingSuite } from '../support/security/smuggling.ts';
import { smugglingFramedSuite } from '../support/security/smuggling-framed.ts';

let shared: FrontDoor | undefined;
const get = (): FrontDoor => {
  if (!shared) throw new Error('the front-door gateway did not start');
  return shared;
};

beforeAll(async () => {
  const project = await makeProject();
  const g = await startTestGateway(project, { connectionTimeouts: FRONT_DOOR_TIMEOUTS });
  shared = { g, records: await liveRecords(project) };
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
paramsUnicodeSuite(get);
smugglingSuite(get);
smugglingFramedSuite(get);
fuzzSuite(get);
slowClientSuite(get); // last: it checks the slow clients were held through every suite
