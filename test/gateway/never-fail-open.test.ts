/**
 * Never fail open: "never audited" is decided by the build's signed domain map, never by a
 * store that lost or mangled a record. Each fault an operator (or a disk) can make of a record's
 * pack ends in a problem document with its code (the reason in the request's log line), while the
 * rest of the build is still served; a map
 * or statement that is missing or does not check refuses the build whole.
 */
import { execFileSync } from 'node:child_process';
import { cp, mkdir, readFile, realpath, rename, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENTRY_SIZE } from '#shared';
import { signRecord } from '../../core/crypto/signing.ts';
import { BUILD_STATEMENT_FILE, CURRENT_LINK, DOMAIN_MAP_FILE, PACK_INDEX_FILE } from '../../core/layout.ts';
import { loadActiveKey } from '../../keyring/signing-keys.ts';
import { cleanup, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { expectCauseLogged, expectProblem } from '../support/gateway-expect.ts';
import { livePackFile, liveRecordBytes } from '../support/packs.ts';
import { makeProject, onePackARecord, type Project } from '../support/project.ts';

const FLAGGED = 'dubious-deals.example';
const CONTROL = 'acme-outdoor.example';
const NEVER = 'never-audited-control.example';

afterAll(cleanup);

/** The rest of the build is served: an audited record, and a never-audited answer. */
async function expectRestServed(g: TestGateway): Promise<void> {
  expect((await g.verify(CONTROL)).status).toBe(200);
  const never = await g.verify(NEVER);
  expect(never.status).toBe(200);
  expect(never.json.status).toBe('unverified');
}

describe("a record's pack in the live build, faulted on a folder", () => {
  let project: Project;
  let g: TestGateway;
  let flagged: { file: string; pack: Buffer; record: Buffer };
  beforeAll(async () => {
    project = await onePackARecord();
    g = await startTestGateway(project);
    const file = await livePackFile(project, FLAGGED);
    flagged = { file, pack: await readFile(file), record: await liveRecordBytes(project, FLAGGED) };
  });

  const faults: [string, string, (file: string) => Promise<void>, RegExp][] = [
    ['deleted', FLAGGED, (f) => rm(f), /missing from the live build \(its pack is not there\), though its map lists it/],
    [
      'a FIFO',
      'knockoff-watches.example',
      async (f) => {
        await rm(f);
        execFileSync('mkfifo', [f]);
      },
      /not a regular file \(a FIFO\)/,
    ],
    [
      'a link to a device',
      'counterfeit-sneakers.example',
      async (f) => {
        await rm(f);
        await symlink('/dev/zero', f);
      },
      /symbolic link/,
    ],
    [
      'a folder',
      'gadget-hub.example',
      async (f) => {
        await rm(f);
        await mkdir(f);
      },
      /not a regular file \(a folder\)/,
    ],
    [
      'a link out of the build',
      'greenleaf-tea.example',
      async (f) => {
        const outside = join(project.root, 'outside.json');
        await writeFile(outside, await readFile(f));
        await rm(f);
        await symlink(outside, f);
      },
      /symbolic link/,
    ],
    [
      'overwritten with 70 KiB of blanks',
      'harbor-furniture.example',
      (f) => writeFile(f, Buffer.alloc(70 * 1024, 0x20)),
      /corrupt \(not JSON\)/,
    ],
    [
      'emptied',
      'indigo-apparel.example',
      (f) => truncate(f, 0),
      /ends before the record of indigo-apparel\.example \(0 of its \d+ bytes\)/,
    ],
    ['truncated', 'juniper-pets.example', async (f) => truncate(f, (await readFile(f)).length - 10), /ends before the record/],
  ];

  for (const [fault, domain, make, reason] of faults) {
    it(`${fault}: 503 UNAVAILABLE, its cause in the log, never "unverified"; the rest of the build is served`, async () => {
      await make(await livePackFile(project, domain));
      const r = await g.verify(domain);
      const problem = expectProblem(r, 503, 'UNAVAILABLE');
      // The answer says what (the code), the request's log line says why and where.
      expectCauseLogged(g, problem, [reason]);
      expect(r.text).not.toContain('unverified');
      // The same answer for a batch entry, the log proof and MCP's record.
      const batch = await g.request('/v1/verify/batch', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ domains: [domain, CONTROL] }),
      });
      expect(batch.json.results[0].problem.code).toBe('UNAVAILABLE');
      expect(batch.json.results[1].record.domain).toBe(CONTROL);
      expectProblem(await g.request(`/v1/absence?domain=${domain}`), 404, 'HAS_RECORD');
      await expectRestServed(g);
    });
  }

  it('counts the refused records in /healthz, and logs each with its reason', async () => {
    const health = await g.request('/healthz', { key: null });
    expect(health.json.records.failures).toBeGreaterThanOrEqual(faults.length);
    expect(g.logs.filter((l) => l.msg === 'record rejected').length).toBeGreaterThanOrEqual(faults.length);
  });

  it('a record comes back when its pack does, on the same gateway: the flagged merchant is flagged again', async () => {
    await writeFile(flagged.file, flagged.pack);
    const r = await g.verify(FLAGGED);
    expect(r.status).toBe(200);
    expect(r.json.status).toBe('flagged');
    expect(r.bytes.equals(flagged.record)).toBe(true);
  });
});

describe('a map, statement or pack index that is missing or does not check: the build is refused whole', () => {
  const cases: [string, (build: string) => Promise<void>, RegExp][] = [
    ['no domain map', (b) => rm(join(b, DOMAIN_MAP_FILE)), /has no domain-map/],
    ['no statement', (b) => rm(join(b, BUILD_STATEMENT_FILE)), /has no statement\.json/],
    ['no pack index', (b) => rm(join(b, PACK_INDEX_FILE)), /has no pack-index/],
    [
      'a pack index a record short',
      async (b) => writeFile(join(b, PACK_INDEX_FILE), (await readFile(join(b, PACK_INDEX_FILE))).subarray(4)),
      /pack-index does not match its statement's packs: it is \d+ bytes, not 4 for each of \d+ records/,
    ],
    [
      'a pack index whose pack ends past its signed length',
      async (b) => {
        const index = await readFile(join(b, PACK_INDEX_FILE));
        index.writeUInt32BE(index.readUInt32BE(index.length - 4) + 1, index.length - 4);
        await writeFile(join(b, PACK_INDEX_FILE), index);
      },
      /pack-index does not match its statement's packs: pack 0 ends at \d+, but the statement says it is \d+ bytes/,
    ],
    [
      'a statement made before packs (signed, naming no packs)',
      async (b) => {
        const { key_id: _k, signature: _s, packs: _p, ...statement } = JSON.parse(await readFile(join(b, BUILD_STATEMENT_FILE), 'utf8'));
        const key = await loadActiveKey(project.keysDir, undefined);
        await writeFile(join(b, BUILD_STATEMENT_FILE), JSON.stringify(signRecord(statement, key!)));
      },
      /statement\.json names no packs \(made before builds were packed.*build it again and publish it\)/,
    ],
    [
      'a map with a leaf dropped',
      async (b) => writeFile(join(b, DOMAIN_MAP_FILE), (await readFile(join(b, DOMAIN_MAP_FILE))).subarray(ENTRY_SIZE)),
      /is not the map its statement signs/,
    ],
    [
      'a map with a leaf changed',
      async (b) => {
        const map = await readFile(join(b, DOMAIN_MAP_FILE));
        map.writeUInt8(map.readUInt8(map.length - 1) ^ 1, map.length - 1);
        await writeFile(join(b, DOMAIN_MAP_FILE), map);
      },
      /is not the map its statement signs/,
    ],
    [
      'a statement with a changed root',
      async (b) => {
        const statement = JSON.parse(await readFile(join(b, BUILD_STATEMENT_FILE), 'utf8'));
        statement.domain_map.size -= 1;
        await writeFile(join(b, BUILD_STATEMENT_FILE), JSON.stringify(statement));
      },
      /does not verify: BAD_SIGNATURE/,
    ],
    [
      'an unsigned statement in a signed deployment',
      async (b) => {
        const { key_id: _k, signature: _s, ...statement } = JSON.parse(await readFile(join(b, BUILD_STATEMENT_FILE), 'utf8'));
        await writeFile(join(b, BUILD_STATEMENT_FILE), JSON.stringify(statement));
      },
      /does not verify: UNSIGNED/,
    ],
  ];
  let project: Project;
  beforeAll(async () => {
    project = await makeProject();
  });
  for (const [fault, make, reason] of cases) {
    it(`${fault}: every domain 503 STORE_UNAVAILABLE, never "unverified"; health degraded`, async () => {
      // The fault made in the live build, a gateway started on it, and the build put back after.
      const live = await realpath(join(project.recordsDir, CURRENT_LINK));
      await cp(live, `${live}.whole`, { recursive: true });
      await make(live);
      const g = await startTestGateway(project);
      try {
        for (const domain of [CONTROL, NEVER, FLAGGED]) {
          const r = await g.verify(domain);
          expectCauseLogged(g, expectProblem(r, 503, 'STORE_UNAVAILABLE'), [reason]);
          expect(r.text).not.toContain('unverified');
        }
        expectProblem(await g.request(`/v1/absence?domain=${NEVER}`), 503, 'STORE_UNAVAILABLE');
        const health = await g.request('/healthz', { key: null });
        expect(health.json).toMatchObject({ status: 'degraded', records: { ok: false } });
      } finally {
        await g.close();
        await rm(live, { recursive: true, force: true });
        await rename(`${live}.whole`, live);
      }
    });
  }
});
