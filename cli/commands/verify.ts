import { UsageError } from '../../core/errors/errors.ts';
import { runAction } from '../cli-output.ts';
import { defineCommand } from '../command.ts';
import { commandOptions } from '../config.ts';

// `--key-set` is a key set (file or URL); `--keys` names the private keys folder in every other
// command, so here it is only kept as an alias for command lines written before the rename.
const options = commandOptions('baseUrl', 'apiKey', 'ohttpRelay');

export default defineCommand({
  meta: { name: 'verify', description: 'Fetch a record from a gateway (or read a saved one) and verify its signature against the key set' },
  args: {
    domain: { type: 'positional', description: 'domain to look up (optional with --file)', required: false },
    ...options.describe({
      ohttpRelay:
        "with --private: an Oblivious HTTP relay URL; every request goes sealed through it, so the gateway never sees your address beside the prefix; the gateway's key configuration must be the one its build signed (else exit 25)",
    }),
    file: { type: 'string', description: 'verify a saved record offline instead of fetching one' },
    'key-set': {
      type: 'string',
      description: 'key set file or URL, or the public folder holding it (default: the gateway key set at --base-url)',
    },
    keys: { type: 'string', description: 'alias of --key-set', aliasOf: 'key-set' },
    'trusted-keys': {
      type: 'string',
      description:
        'a key set file of the keys you trust: only they, and keys they endorsed (link by link), may have signed; another key the key set lists is KEY_NOT_TRUSTED (exit 22)',
    },
    log: { type: 'boolean', description: 'also require proof that the record is in the public transparency log' },
    proof: { type: 'string', description: 'the tlog-proof file (default: GET /v1/proof from the gateway); implies --log' },
    'log-key': {
      type: 'string',
      description:
        "the log's verifier key, a file or URL (default <base-url>/.well-known/merchant-verify-log.vkey; with --mirror, the key the mirror keeps); implies --log",
    },
    policy: {
      type: 'string',
      description:
        "a tlog-policy file (the log, its witnesses, the quorum): the proof's checkpoint must be cosigned by the quorum; implies --log for a record",
    },
    'max-age': { type: 'string', description: 'with --policy: cosignatures older than this do not count, e.g. 36h, 90m, 2d' },
    checkpoint: {
      type: 'string',
      description:
        "a checkpoint of the log you saved and trust (a file from <log>/checkpoint): the answer's must be of its origin and no smaller; implies --log",
    },
    build: {
      type: 'string',
      description:
        "a kept build's id: its answer is fetched (&build=ID) or the saved one checked as that build's, which need not be the newest",
    },
    absence: {
      type: 'string',
      description:
        "verify a saved absence proof (GET /v1/absence) of DOMAIN offline; a never-audited answer is otherwise checked against the gateway's proof",
    },
    private: {
      type: 'boolean',
      description:
        "ask the gateway for a bucket of the domain's SHA-256 only (GET /v1/lookup, then /v1/lookup/{bits}/{hex}), never the domain, and verify the answer",
    },
    mirror: {
      type: 'string',
      description:
        'answer offline from a mirror folder (mvr mirror --to DIR): its record, or the proof that it has none, verified against the keys the mirror trusts; with --log, a record with its own log proof and its bundle too, made from the files the mirror keeps',
    },
    bundle: {
      type: 'string',
      description:
        'verify a kept bundle (GET /v1/bundle) offline, nothing fetched: with --key-set or --trusted-keys FILE, and --log-key, --policy, --max-age, --at',
    },
    'bundle-out': {
      type: 'string',
      description: "fetch DOMAIN's bundle from the gateway, save it to this file to keep, and verify it",
    },
    at: { type: 'string', description: 'with --bundle: verify as of this time (ISO 8601, e.g. 2026-12-01T00:00:00Z), not now' },
    json: { type: 'boolean', description: 'print a machine-readable result' },
  },
  run: ({ args, io }) =>
    runAction(io, Boolean(args.json), async () => {
      const gateway = options.resolve(args, io.env);
      if (args.at !== undefined && !args.bundle) throw new UsageError('--at verifies a kept bundle as of a past time: give --bundle FILE');
      if (gateway.ohttpRelay !== undefined && !args.private)
        throw new UsageError('--ohttp-relay (MVR_OHTTP_RELAY) carries private lookups: give --private too');
      const outcome =
        args.bundle || args['bundle-out']
          ? await (await import('../verify-bundle.ts')).verifyFromBundle(args, gateway)
          : args.mirror
            ? await (await import('../verify-mirror.ts')).verifyFromMirror(args, args.mirror)
            : args.private
              ? await (await import('../verify-private.ts')).verifyPrivately(args, gateway)
              : await (await import('../verify-action.ts')).verifyFromArgs(args, gateway);
      if (args.json) io.stdout.write(`${JSON.stringify(outcome.json)}\n`);
      else io.stdout.write(outcome.text);
      return outcome.exitCode;
    }),
});
