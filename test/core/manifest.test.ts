/** manifest.json has one schema: what the build writes parses with it, and a reader names what is wrong in one that does not. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BuildError } from '../../core/errors/errors.ts';
import { CURRENT_LINK, MANIFEST_FILE } from '../../core/layout.ts';
import { manifestText, parseManifest } from '../../core/schemas/manifest.ts';
import { cleanup } from '../support/gateway.ts';
import { ISSUER, makeProject } from '../support/project.ts';

afterAll(cleanup);

describe('manifest.json', () => {
  it('as the build wrote it parses, and is written back byte for byte', async () => {
    const p = await makeProject();
    const bytes = await readFile(join(p.recordsDir, CURRENT_LINK, MANIFEST_FILE), 'utf8');
    const manifest = parseManifest(bytes, MANIFEST_FILE);
    expect(manifest).toMatchObject({ issuer: ISSUER, key_id: p.kid, key_ids_published: [p.kid] });
    expect(manifestText(manifest)).toBe(bytes);
  });

  it('that is not one is a BuildError naming the file and the member', async () => {
    const p = await makeProject();
    const good = JSON.parse(await readFile(join(p.recordsDir, CURRENT_LINK, MANIFEST_FILE), 'utf8')) as Record<string, unknown>;
    const { records: _, ...noRecords } = good;
    const read = (m: unknown) => () => parseManifest(JSON.stringify(m), 'builds/x/manifest.json');
    expect(read(noRecords)).toThrow(BuildError);
    expect(read(noRecords)).toThrow(/^builds\/x\/manifest\.json is not a build manifest: records: /);
    expect(read({ ...good, records: -1 })).toThrow(/: records: /);
    expect(read({ ...good, log: { origin: 'o', from: 0 } })).toThrow(/: log\.to: /);
    expect(read({ ...good, extra: 1 })).toThrow(/not a build manifest/);
    expect(() => parseManifest('{', 'm.json')).toThrow(/^m\.json is not JSON/);
    // The writer checks too: a build cannot write a manifest its readers would refuse.
    expect(() => manifestText({ ...parseManifest(JSON.stringify(good), MANIFEST_FILE), records: 1.5 })).toThrow();
  });
});
