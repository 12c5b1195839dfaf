import { copyFile, mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { UsageError } from '../core/errors/errors.ts';
import { PACKAGE_ROOT } from '../core/version.ts';
import { createLogKey, logOrigin } from '../keyring/log-key.ts';
import { keygen } from '../keyring/signing-keys.ts';
import { writeDatedAudits } from './dev-audits.ts';

/** The files `mvr init` copies as they are: shipped in the package's templates/init/ (npm drops a file named .gitignore, hence `gitignore`). */
const TEMPLATES = fileURLToPath(new URL('templates/init/', PACKAGE_ROOT));
const COPIED: Record<string, string> = {
  'README.md': 'README.md',
  gitignore: '.gitignore',
  'monthly-rebuild.yml': '.github/workflows/monthly-rebuild.yml',
};

/** The witness policy file of a new project. */
export const POLICY_FILE = 'witnesses.policy';

/** What `mvr init` made (the `--json` summary: snake_case). */
export interface InitSummary {
  dir: string;
  /** Every file written, relative to `dir`, sorted. */
  files: string[];
  signing_kid: string;
  log_vkey: string;
  audits: number;
}

/** A step done, for the progress lines. */
export type InitStep = 'audits' | 'keys' | 'files';

/**
 * Scaffolds a project of one's own in `dir` (made if missing; refused, INVALID_USAGE, when it holds
 * anything, so no key or file of someone's is ever overwritten): the example audits dated so the
 * typical one is a few days old and none is after `now` (the build refuses a future date), a
 * development signing key and log key (0600, as `mvr keygen` makes them), a witness policy with the
 * log line filled in, and the template files (README, .gitignore, the monthly workflow).
 */
export async function initProject(
  dir: string,
  { issuer, now, onStep = () => {} }: { issuer: string; now: number; onStep?: (step: InitStep) => void },
): Promise<InitSummary> {
  await refuseUsedFolder(dir);
  await mkdir(dir, { recursive: true });
  const { audits } = await writeDatedAudits(join(TEMPLATES, 'audits'), join(dir, 'audits'), now);
  onStep('audits');
  const keysDir = join(dir, 'keys');
  const kid = await keygen(keysDir);
  const logKey = await createLogKey(keysDir, logOrigin(issuer));
  onStep('keys');
  await writeFile(join(dir, POLICY_FILE), policyTemplate(logKey.vkey));
  for (const [from, to] of Object.entries(COPIED)) {
    await mkdir(dirname(join(dir, to)), { recursive: true });
    await copyFile(join(TEMPLATES, from), join(dir, to));
  }
  onStep('files');
  return { dir, files: await filesUnder(dir), signing_kid: kid, log_vkey: logKey.vkey, audits };
}

/** Only a new or empty folder: init never writes over what someone made (keys least of all). */
async function refuseUsedFolder(dir: string): Promise<void> {
  const found = await stat(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (found === null) return;
  if (!found.isDirectory()) throw new UsageError(`DIR ${dir}: exists and is not a folder; give a new or empty folder`);
  if ((await readdir(dir)).length > 0) throw new UsageError(`DIR ${dir}: exists and is not empty; give a new or empty folder`);
}

/**
 * A C2SP tlog-policy that verifies this log's checkpoints and asks no witness yet (`quorum none`),
 * so it parses as it is; the witness lines show the shape to fill in, commented out, because a
 * witness cosigns only a log it has taken up (docs/witnesses.md, the public witness network).
 */
export function policyTemplate(logVkey: string): string {
  return [
    '# Who must cosign this log (c2sp.org/tlog-policy); mvr build and mvr publish read it with',
    '# --witness-policy, a verifier with --policy. The log, by its verifier key:',
    `log ${logVkey}`,
    '#',
    '# The witnesses, once they have taken this log up (for the public witness network, ask with the',
    '# log line above): one line each, then a quorum over independent operators.',
    '# witness <name> <vkey> <submission URL>',
    '# witness <name> <vkey> <submission URL>',
    '# witness <name> <vkey> <submission URL>',
    '# group two-of-three 2 <name> <name> <name>',
    '# quorum two-of-three',
    'quorum none',
    '',
  ].join('\n');
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}
