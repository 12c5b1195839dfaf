/**
 * The docs name what the gateway serves and answers. docs/http-api.md's table of errors names every
 * code of the error registry, each with the HTTP status and the exit code the registry gives it, so
 * a new code (or a changed status) fails here until the table says when it happens. Every route of
 * the OpenAPI document (which a contract test holds to the app's routes) is on docs/http-api.md and
 * in the README's list of routes, with each of its methods.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_REGISTRY, type ErrorCode } from '../../core/errors/errors.ts';
import { openApiDocument } from '../../gateway/openapi.ts';
import { ROOT } from '../support/project.ts';

const DOC = 'docs/http-api.md';

/**
 * Each code the table's first column names, with the status and exit of its row. A cell groups
 * codes by `;`, and the HTTP and exit cells give one value a group (or one for all): `` `A`, `B`;
 * `C` | 401; 403 | 1 `` is A and B 401, C 403, all three exit 1. `-`: no HTTP status.
 */
function documented(markdown: string): Map<string, { status: number | null; exit: number }> {
  const table = markdown.slice(markdown.indexOf('| code | HTTP | exit | when |'));
  const rows = table.split('\n').slice(2);
  const found = new Map<string, { status: number | null; exit: number }>();
  for (const row of rows) {
    if (!row.startsWith('|')) break;
    const [codes, http, exit] = row.split(' | ').map((c) => c.replace(/^\| /, ''));
    const groups = codes!.split(';');
    const value = (cell: string, i: number) => {
      const parts = cell.split(';').map((p) => p.trim());
      return parts.length === 1 ? parts[0]! : parts[i]!;
    };
    groups.forEach((group, i) => {
      for (const [, code] of group.matchAll(/`([A-Z_]+)`/g)) {
        const status = value(http!, i);
        found.set(code!, { status: status === '-' ? null : Number(status), exit: Number(value(exit!, i)) });
      }
    });
  }
  return found;
}

describe(`${DOC}'s errors`, () => {
  const table = documented(readFileSync(join(ROOT, DOC), 'utf8'));

  it('the reader sees what it is about: a row of codes grouped by status', () => {
    expect(
      documented('| code | HTTP | exit | when |\n|---|---|---|---|\n| `A`, `B`; `C` | 401; 403 | 1 | x |\n| `D` | - | 1; 13 | y |\n'),
    ).toEqual(
      new Map([
        ['A', { status: 401, exit: 1 }],
        ['B', { status: 401, exit: 1 }],
        ['C', { status: 403, exit: 1 }],
        ['D', { status: null, exit: 1 }],
      ]),
    );
    expect(table.size).toBeGreaterThan(40);
  });

  it('name every code of the registry, with its HTTP status and exit code, and no other', () => {
    const registry = Object.fromEntries(
      (Object.keys(ERROR_REGISTRY) as ErrorCode[]).map((code) => [
        code,
        { status: ERROR_REGISTRY[code].status, exit: ERROR_REGISTRY[code].exit },
      ]),
    );
    expect(Object.fromEntries(table)).toEqual(registry);
  });
});

/** The routes of the OpenAPI document, each as `METHOD /path`, a path cut at its first `{parameter}`. */
function documentedRoutes(): string[] {
  const doc = openApiDocument({ issuer: 'verify.example', schemaUrl: 'https://verify.example/schemas/verification/v1' }) as {
    paths: Record<string, Record<string, unknown>>;
  };
  return Object.entries(doc.paths).flatMap(([path, operations]) =>
    Object.keys(operations)
      .filter((method) => method === 'get' || method === 'post')
      .map((method) => `${method.toUpperCase()} ${path.split('{')[0]}`),
  );
}

/** The routes of `routes` that `markdown` does not name as `` `METHOD /path... ``. */
function unnamed(markdown: string, routes: string[]): string[] {
  return routes.filter((route) => !markdown.includes(`\`${route}`));
}

describe('the routes', () => {
  const routes = documentedRoutes();

  it('the check sees what it is about: every route, and a page that leaves one out', () => {
    expect(routes).toEqual(expect.arrayContaining(['GET /v1/verify', 'POST /v1/verify/batch', 'GET /log/tile/', 'POST /mcp']));
    expect(unnamed('`GET /v1/verify?domain=` and `GET /log/tile/...`', ['GET /v1/verify', 'GET /log/tile/', 'POST /mcp'])).toEqual([
      'POST /mcp',
    ]);
  });

  it.each(['README.md', DOC])('are all named on %s, with each of their methods', (page) => {
    expect(unnamed(readFileSync(join(ROOT, page), 'utf8'), routes)).toEqual([]);
  });
});
