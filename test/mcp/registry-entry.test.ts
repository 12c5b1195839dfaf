/**
 * server.json, the entry for the MCP Registry: the npm package run over stdio (`mvr mcp`) with the
 * environment it needs, and the remote endpoint behind a required, secret API key. Checked
 * against the registry's server.json schema, and the package entry run as a client would run it.
 *
 * The schema is not available offline (no copy in node_modules), so its required shape is
 * written here with zod from the published schema
 * (https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json, as documented in
 * modelcontextprotocol/registry docs/reference/server-json): the members this entry uses and every
 * member the schema requires, strict, so a misspelt member fails.
 */
import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { OPTIONS } from '../../cli/config.ts';
import { BIN } from '../support/cli.ts';
import { cleanup, startTestGateway } from '../support/gateway.ts';
import { GOLD, makeProject, ROOT } from '../support/project.ts';

const entry = JSON.parse(readFileSync(`${ROOT}/server.json`, 'utf8'));
const pkg = JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8'));

afterAll(cleanup);

// --- The registry's schema (2025-12-11), the parts an entry like this one meets. ---
const input = {
  description: z.string().optional(),
  isRequired: z.boolean().optional(),
  format: z.enum(['string', 'number', 'boolean', 'filepath']).optional(),
  value: z.string().optional(),
  isSecret: z.boolean().optional(),
  default: z.string().optional(),
  placeholder: z.string().optional(),
  choices: z.array(z.string()).optional(),
};
const keyValueInput = z.strictObject({ name: z.string().min(1), ...input });
const argument = z.union([
  z
    .strictObject({ type: z.literal('positional'), valueHint: z.string().optional(), isRepeated: z.boolean().optional(), ...input })
    .refine((a) => a.value !== undefined || a.valueHint !== undefined, 'a positional argument needs value or valueHint'),
  z.strictObject({ type: z.literal('named'), name: z.string().min(1), isRepeated: z.boolean().optional(), ...input }),
]);
const stdio = z.strictObject({ type: z.literal('stdio') });
const streamableHttp = z.strictObject({ type: z.literal('streamable-http'), url: z.url(), headers: z.array(keyValueInput).optional() });
const sse = z.strictObject({ type: z.literal('sse'), url: z.url(), headers: z.array(keyValueInput).optional() });
const packageSchema = z.strictObject({
  registryType: z.string().min(1),
  registryBaseUrl: z.url().optional(),
  identifier: z.string().min(1),
  version: z
    .string()
    .min(1)
    .refine((v) => v !== 'latest' && !/[\^~*<>=| ]/.test(v), 'a specific version, not a range or "latest"')
    .optional(),
  fileSha256: z
    .string()
    .regex(/^[a-f0-9]{64}$/)
    .optional(),
  runtimeHint: z.string().optional(),
  transport: z.union([stdio, streamableHttp, sse]),
  runtimeArguments: z.array(argument).optional(),
  packageArguments: z.array(argument).optional(),
  environmentVariables: z.array(keyValueInput).optional(),
});
const serverSchema = z.strictObject({
  $schema: z.url(),
  name: z
    .string()
    .min(3)
    .max(200)
    .regex(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/),
  title: z.string().min(1).max(100).optional(),
  description: z.string().min(1).max(100),
  version: z.string().min(1).max(255),
  repository: z
    .strictObject({ url: z.url(), source: z.string().min(1), id: z.string().optional(), subfolder: z.string().optional() })
    .optional(),
  websiteUrl: z.url().optional(),
  packages: z.array(packageSchema).optional(),
  remotes: z.array(z.union([streamableHttp, sse])).optional(),
});

describe('server.json', () => {
  it("has the registry schema's shape", () => {
    const parsed = serverSchema.safeParse(entry);
    expect(parsed.success ? [] : parsed.error.issues).toEqual([]);
    expect(serverSchema.safeParse({ ...entry, packages: [{ ...entry.packages[0], transport: { type: 'stdin' } }] }).success).toBe(false);
  });

  it('names the package (mcpName) and its version', () => {
    expect(entry.name).toBe(pkg.mcpName);
    expect(entry.version).toBe(pkg.version);
    expect(entry.$schema).toMatch(/^https:\/\/static\.modelcontextprotocol\.io\/schemas\/[\d-]+\/server\.schema\.json$/);
  });

  it('offers the npm package over stdio as `mvr mcp`, with the variables that command reads', () => {
    expect(entry.packages).toHaveLength(1);
    const [npm] = entry.packages;
    expect(npm).toMatchObject({ registryType: 'npm', identifier: pkg.name, version: pkg.version, transport: { type: 'stdio' } });
    expect(pkg.bin).toHaveProperty('mvr');
    expect(npm.packageArguments).toEqual([expect.objectContaining({ type: 'positional', value: 'mcp' })]);
    const variables = Object.fromEntries(npm.environmentVariables.map((v: { name: string }) => [v.name, v]));
    expect(Object.keys(variables).sort()).toEqual([OPTIONS.apiKey.env, OPTIONS.baseUrl.env].sort());
    expect(variables[OPTIONS.apiKey.env]).toMatchObject({ isRequired: true, isSecret: true });
    expect(variables[OPTIONS.baseUrl.env]).toMatchObject({ isRequired: true });
  });

  it('offers the gateway as a Streamable HTTP remote that requires a secret Authorization header', () => {
    expect(entry.remotes).toHaveLength(1);
    const [remote] = entry.remotes;
    expect(remote).toMatchObject({ type: 'streamable-http' });
    expect(new URL(remote.url).pathname).toBe('/mcp');
    expect(remote.headers).toEqual([expect.objectContaining({ name: 'Authorization', isRequired: true, isSecret: true })]);
  });

  it('the package entry runs as a client runs it: the bin with its arguments and variables, against a real gateway', async () => {
    const project = await makeProject();
    const gw = await startTestGateway(project);
    const [npm] = entry.packages;
    const values: Record<string, string> = { [OPTIONS.baseUrl.env]: gw.url, [OPTIONS.apiKey.env]: gw.key };
    const env = Object.fromEntries(npm.environmentVariables.map((v: { name: string }) => [v.name, values[v.name]!]));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, ...npm.packageArguments.map((a: { value: string }) => a.value)],
      cwd: project.root,
      env: { PATH: process.env.PATH ?? '', ...env },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'registry-entry-test', version: '1.0.0' });
    try {
      await client.connect(transport);
      expect(client.getServerVersion()).toMatchObject({ name: 'merchant-verify', version: pkg.version });
      const result = await client.callTool({ name: 'verify_merchant', arguments: { domain: GOLD } });
      expect(result.isError).toBeFalsy();
      // Over a gateway the lookup is private by default: the verdict is GOLD's map entry's, the record not fetched.
      expect(result.structuredContent).toMatchObject({
        valid: true,
        domain: GOLD,
        claims: { status: 'verified' },
        entry: { record_fetched: false },
        record: null,
      });
    } finally {
      await client.close();
      await gw.close();
    }
  });
});
