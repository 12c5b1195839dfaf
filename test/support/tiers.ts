/**
 * The suite's two tiers. The unit tier (`npm run test:unit`) runs in the test process only: no
 * child process, no server on a port, no CLI run, no browser. The end-to-end tier is every other
 * file. A file is end to end when its text starts something: one of test/support's starters (a
 * gateway, a bucket, a witness, a CLI run in or out of the process, a page) or a process or server
 * of its own. The unit tier's set-up (./unit-tier-guard.ts) refuses to start either, so a file
 * this reading sorts wrong fails at once, naming what it started.
 */
import { readFileSync } from 'node:fs';
import fg from 'fast-glob';

/** test/support's starters, and the platform calls that start a process or a server. */
const STARTS_SOMETHING = new RegExp(
  [
    String.raw`\b(?:startTestGateway|useGateway|startGatewayCluster|spawnCli|runCli|holdingOrigin|startRedis|startS3|startStaticOrigin)\b`,
    String.raw`\b(?:startTestWitness|spawnWitnessCli|runBuildJob|gatewayOver|useGoldGateway|openPage|connectHttpClient|startBuildWitnesses)\b`,
    String.raw`\b(?:cosignBuild|mirrorCli|publishTo|gatewayOnBucket|bucketAt|publishChanged|twoWitnessedMonths|witnessedProject)\b`,
    String.raw`\b(?:startGateway|startRefusingGateway|createServer|waitForExit|execFile|execFileSync|spawn|fork|freePort|canListen|listen)\b|child_process`,
  ].join('|'),
);

/** Whether a test file's text starts a process, a server or the CLI (so it is end to end). */
export function startsSomething(text: string): boolean {
  return STARTS_SOMETHING.test(text);
}

/** The unit tier's files (repository-relative, under `root`), sorted. */
export function unitTestFiles(root: string): string[] {
  return fg
    .sync('test/**/*.test.ts', { cwd: root })
    .filter((file) => !startsSomething(readFileSync(`${root}/${file}`, 'utf8')))
    .sort();
}
