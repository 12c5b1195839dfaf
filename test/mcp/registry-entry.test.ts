/** server.json, the entry for the MCP Registry: the remote endpoint behind a required, secret API key. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/project.ts';

const entry = JSON.parse(readFileSync(`${ROOT}/server.json`, 'utf8'));
const pkg = JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8'));

describe('server.json', () => {
  it('names the package (mcpName) and its version', () => {
    expect(entry.name).toBe(pkg.mcpName);
    expect(entry.name).toMatch(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/);
    expect(entry.version).toBe(pkg.version);
    expect(entry.$schema).toMatch(/^https:\/\/static\.modelcontextprotocol\.io\/schemas\/[\d-]+\/server\.schema\.json$/);
    expect(entry.description.length).toBeLessThanOrEqual(100);
  });

  it('offers the gateway as a Streamable HTTP remote that requires a secret Authorization header', () => {
    expect(entry.remotes).toHaveLength(1);
    const [remote] = entry.remotes;
    expect(remote).toMatchObject({ type: 'streamable-http' });
    expect(new URL(remote.url).pathname).toBe('/mcp');
    expect(remote.headers).toEqual([expect.objectContaining({ name: 'Authorization', isRequired: true, isSecret: true })]);
  });
});
