/**
 * The gateway tests' helpers, kept for the suites that import them here: all of them are the
 * shared test fixture's (test/support/). New tests import test/support/ directly.
 */
export { build, ISSUER, liveRecordFile, makeProject, NOW, NOW_ISO, ROOT, SAMPLE_AUDITS, SCHEMA_URL, type Project as TestProject } from '../support/project.ts';
export { addApiKey, cleanup, rawRequest, RECORD_CACHE_CONTROL, REFRESH_MS, startTestGateway, useGateway, waitForLog, type Reply, type RequestOptions, type TestGateway } from '../support/gateway.ts';
export { expectNoSecretsInLogs, expectProblem } from '../support/gateway-expect.ts';
export { activeSigner, liveRecords, publishedKeySet } from '../support/outputs.ts';
export { poll, sleep } from '../support/wait.ts';
