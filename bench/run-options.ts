/**
 * `npm run bench`: the build beside the machine's raw Ed25519 capacity, and the gateway beside
 * nginx serving the same signed files, all in one run so the ratios compare like with like.
 * Options: --sizes 10000,100000,1000000  --gateway-records 100000  --seconds 10  --connections 64  --workers 1
 *          --rounds 5 (the comparisons run this many times, interleaved; the table shows the median)
 *          --hot 1000 (records in the hot set; as many never-audited domains are asked for)
 *          --rotating 10000 (records of the rotating hot set, asked in turn, beside a floor that looks the key and domain up)
 *          --keep-caches (do not drop the kernel's caches before each build; see dropCaches())
 *          --before DIR (another built checkout's gateway, such as the commit before a change, in every round)
 *          --perf-basic-prof (the shipped gateway started with node's flag of that name, for `perf record -p PID`)
 *          --builds-only (the raw capacity and the builds; no gateway)
 *          --gateway-only (the gateway's comparisons alone: no raw capacity, no measured build)
 */
import { parseArgs } from 'node:util';

export const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '10000,100000,1000000' },
    'gateway-records': { type: 'string', default: '100000' },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '64' },
    workers: { type: 'string', default: '1' },
    'cache-mb': { type: 'string', default: '16' },
    rounds: { type: 'string', default: '5' },
    hot: { type: 'string', default: '1000' },
    rotating: { type: 'string', default: '10000' },
    'keep-caches': { type: 'boolean', default: false },
    before: { type: 'string' },
    'perf-basic-prof': { type: 'boolean', default: false },
    'builds-only': { type: 'boolean', default: false },
    'gateway-only': { type: 'boolean', default: false },
  },
});
export const seconds = Number(values.seconds),
  connections = Number(values.connections),
  workers = Number(values.workers);
export const gatewayRecords = Number(values['gateway-records']);
export const rounds = Number(values.rounds),
  hotSetSize = Number(values.hot),
  rotatingSetSize = Number(values.rotating);
export const sizes = values.sizes!.split(',').map(Number);
sizes.sort((a, b) => a - b);
