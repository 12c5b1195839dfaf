import { parseArgs } from 'node:util';

export interface SoakOptions {
  /** Planned load duration; faults are placed at fixed fractions of it. */
  seconds: number;
  /** Requests in flight at any time. */
  concurrency: number;
  /** Synthetic audits (= records) in the build. */
  audits: number;
  json: boolean;
  /** The gateway's --cache-mb: small, so most cold reads miss and go to disk. */
  cacheMb: number;
  /** Seed of the audits and of the request mix. */
  seed: number;
  /** Hard bound on requests, whatever the time. */
  maxRequests: number;
}

export class UsageError extends Error {}

const USAGE = `usage: npm run soak -- [--seconds 60] [--concurrency 64] [--audits 20000] [--cache-mb 2] [--seed 42] [--max-requests N] [--json]`;

export function parseOptions(argv: string[]): SoakOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        seconds: { type: 'string', default: '60' },
        concurrency: { type: 'string', default: '64' },
        audits: { type: 'string', default: '20000' },
        'cache-mb': { type: 'string', default: '2' },
        seed: { type: 'string', default: '42' },
        'max-requests': { type: 'string' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }));
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${USAGE}`);
  }
  if (values.help) throw new UsageError(USAGE);
  const int = (name: string, text: string, min: number, max: number): number => {
    if (!/^\d+$/.test(text)) throw new UsageError(`--${name} "${text}": must be a whole number\n${USAGE}`);
    const n = Number(text);
    if (n < min || n > max) throw new UsageError(`--${name} ${n}: must be between ${min} and ${max}\n${USAGE}`);
    return n;
  };
  const seconds = int('seconds', values.seconds!, 10, 3600);
  return {
    seconds,
    concurrency: int('concurrency', values.concurrency!, 1, 1024),
    // Hot, fault and never-requested domains are taken out of the audited ones: keep enough.
    audits: int('audits', values.audits!, 200, 2_000_000),
    cacheMb: int('cache-mb', values['cache-mb']!, 1, 4096),
    seed: int('seed', values.seed!, 1, 2 ** 31),
    maxRequests: values['max-requests'] === undefined ? seconds * 50_000 : int('max-requests', values['max-requests'], 1, 1e9),
    json: values.json!,
  };
}
