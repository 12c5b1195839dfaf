/**
 * What a CLI command loads before it runs: the modules its file imports statically, and theirs.
 * Every `mvr` run pays for them before it does anything (the tests run the CLI a few hundred
 * times), so the heavy parsers a command's work may need are loaded with that work (a dynamic
 * `import()` in the action), not at start-up: `mvr keygen`, `mvr apikey` or a usage error never
 * parse a domain name. A gateway process loads a backend's client (Redis, HTTP, S3), the metrics
 * and the MCP SDK only when it is configured with them or first asked over MCP.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/project.ts';

/** Packages no command loads at start-up (each costs a tenth of a second or more to import). */
const NOT_AT_START = ['tldts', 'whatwg-url', '@redis/client', 'undici', 'prom-client', '@modelcontextprotocol/server', 'aws4fetch'];
/**
 * What a serving gateway process loads before it listens (`mvr serve` loads these modules once it
 * has read its flags; a cluster's primary only the log and the cluster), and what it must not:
 * Redis, the metrics and an origin's or a bucket's client come with their settings, the MCP SDK
 * with the first MCP request.
 */
const GATEWAY_START = ['gateway/server.ts', 'gateway/json-log.ts', 'gateway/cluster.ts'];
const NOT_AT_GATEWAY_START = ['@redis/client', 'prom-client', 'undici', 'aws4fetch', '@modelcontextprotocol/server'];
/** The records stack (the gateway's, `mvr mcp`'s, `mvr changes`'s) opens a folder without an HTTP client or a signer. */
const NOT_WITH_THE_RECORDS = ['undici', 'aws4fetch'];
const COMMANDS = join(ROOT, 'cli', 'commands');

/** A module's static, value imports (`import ... from`, `export ... from`, `import '...'`), not `import type` nor `import()`. */
function staticImports(text: string): string[] {
  const statements = text.matchAll(/^(?:import|export)\s+(?!type\s)(?:[^'"`;]*?\sfrom\s*)?['"]([^'"]+)['"]/gm);
  return [...statements].map((m) => m[1]!);
}

/** The packages (by name) and files reached from `file` through static imports, with the path to each package. */
function startUpClosure(...files: string[]): Map<string, string[]> {
  const reached = new Map<string, string[]>();
  const seen = new Set<string>();
  const visit = (path: string, trail: string[]) => {
    if (seen.has(path)) return;
    seen.add(path);
    for (const specifier of staticImports(readFileSync(path, 'utf8'))) {
      if (specifier.startsWith('.')) {
        const next = resolve(dirname(path), specifier);
        if (existsSync(next)) visit(next, [...trail, relative(ROOT, next)]);
      } else if (!specifier.startsWith('node:')) {
        const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!;
        if (!reached.has(name)) reached.set(name, trail);
      }
    }
  };
  for (const file of files) visit(file, [relative(ROOT, file)]);
  return reached;
}

describe('what a command loads at start-up', () => {
  const commands = readdirSync(COMMANDS).filter((f) => f.endsWith('.ts'));

  it('finds the commands and follows their imports', () => {
    expect(commands).toContain('keygen.ts');
    // The walk itself: zod is loaded at start-up (the options' schemas), through cli/config.ts.
    expect(startUpClosure(join(COMMANDS, 'keygen.ts')).get('zod')).toContain('cli/config.ts');
  });

  it.each(NOT_AT_START)('no command imports %s before its action runs', (pkg) => {
    const offenders = commands.flatMap((command) => {
      const trail = startUpClosure(join(COMMANDS, command)).get(pkg);
      return trail ? [`${command}: ${trail.join(' -> ')}`] : [];
    });
    expect(offenders).toEqual([]);
  });
});

describe('what a gateway process loads before it listens', () => {
  it.each(NOT_AT_GATEWAY_START)('it does not import %s statically', (pkg) => {
    const trail = startUpClosure(...GATEWAY_START.map((f) => join(ROOT, f))).get(pkg);
    expect(trail?.join(' -> ')).toBeUndefined();
  });

  it.each(NOT_WITH_THE_RECORDS)('opening the records does not import %s statically', (pkg) => {
    const trail = startUpClosure(join(ROOT, 'service', 'records-stack.ts')).get(pkg);
    expect(trail?.join(' -> ')).toBeUndefined();
  });
});
