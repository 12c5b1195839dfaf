import { join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PACKAGE_ROOT } from '../../core/version.ts';
import { runAction } from '../cli-output.ts';
import { defineCommand } from '../command.ts';
import { commandOptions, resolveNow } from '../config.ts';
import { type InitStep, initProject, POLICY_FILE } from '../init-project.ts';
import { createProgress } from '../progress.ts';

const options = commandOptions('issuer', 'progressMs');

const STEP_TEXT: Record<InitStep, string> = {
  audits: 'wrote the example audits',
  keys: 'made the development keys',
  files: 'wrote the witness policy, the workflow, .gitignore and README.md',
};

export default defineCommand({
  meta: {
    name: 'init',
    description:
      'Scaffold a project of your own in DIR (new or empty): example audits, development keys (0600), a witness policy, the monthly workflow, .gitignore and a README',
  },
  args: {
    dir: { type: 'positional', description: 'the new project folder (default: this folder, if empty)', required: false },
    ...options.describe({ issuer: 'issuer domain: names the log key (<issuer>/log) and the policy log line' }),
    json: { type: 'boolean', description: 'print a JSON summary (dir, files, signing_kid, log_vkey, audits)' },
  },
  run: ({ args, io }) =>
    runAction(io, Boolean(args.json), async () => {
      const { issuer, progressMs } = options.resolve(args, io.env);
      const dir = args.dir ?? '.';
      const json = Boolean(args.json);
      const progress = createProgress({ command: 'init', json, intervalMs: progressMs, stream: io.stderr });
      try {
        const summary = await initProject(dir, {
          issuer,
          now: await resolveNow(undefined, io.env),
          onStep: (step) => progress.update({ text: STEP_TEXT[step], fields: { step } }, true),
        });
        // The done line says what was made, not the last step again ("done, wrote the witness policy, ...").
        progress.update({ text: `${summary.files.length} files written`, fields: { step: 'done', files: summary.files.length } });
        progress.finish();
        if (json) io.stdout.write(`${JSON.stringify({ ok: true, ...summary })}\n`);
        else io.stdout.write(nextSteps(dir, summary.signing_kid, summary.files.length));
      } finally {
        progress.stop();
      }
    }),
});

/** What a reader does next, in the new project: how it gets `mvr`, then the first commands. */
function nextSteps(dir: string, kid: string, files: number): string {
  return [
    `made a merchant-verify project in ${dir} (${files} files; see its README.md)`,
    '',
    'Next, in that folder:',
    `  cd ${dir}`,
    `  ${installLine()}`,
    '  npx mvr build',
    '  KEY=$(npx mvr apikey create --label me)',
    '  npx mvr serve &',
    '  npx mvr verify your-shop.example --base-url http://127.0.0.1:8787 --api-key "$KEY" --log',
    '',
    `The keys in ${join(dir, 'keys')} (0600) are for development and stay out of git. For CI, pass the signing key`,
    `(${join(dir, 'keys', 'signing', `${kid}.jwk.json`)}) as the secret MVR_SIGNING_KEY and keys/log.key as MVR_LOG_KEY:`,
    'docs/keys-and-rotation.md and docs/monthly-rebuild.md of merchant-verify. Fill the witnesses into',
    `${POLICY_FILE} once they have taken the log up.`,
    '',
  ].join('\n');
}

/**
 * How the new project gets `mvr`: from the clone this `mvr` runs from (built already, so its
 * `prepare` is skipped), or, run from an installed package, from npm or a tarball.
 */
function installLine(): string {
  const root = fileURLToPath(PACKAGE_ROOT).replace(/[\\/]$/, '');
  if (root.split(sep).includes('node_modules'))
    return 'npm install merchant-verify        # or a tarball: npm install ./merchant-verify-0.1.0.tgz';
  const path = /^[\w@%+=:,./-]+$/.test(root) ? root : `'${root.replaceAll("'", `'\\''`)}'`;
  return `npm install --ignore-scripts ${path}   # mvr from the clone that made it (from npm: npm install merchant-verify)`;
}
