/**
 * The walk behind "the JSON this project defines is snake_case" (test/architecture/snake-case-json.test.ts):
 * every member name of a parsed output, camelCase ones reported with their path. Members named by a
 * standard keep the standard's spelling: they are listed here, each with its standard. Tests of the
 * commands that need a bucket, a witness or a mirror (publish, pull, mirror, log witness, verify
 * --mirror and --policy) walk their own outputs with it where they run them.
 */

/**
 * Member names a standard spells otherwise, none of them camelCase today but kept here so a
 * standard's name is never "fixed": JWK (RFC 7517/8037: kty, crv, x, kid, use, alg) and RFC 9457
 * problem documents (type, title, status, detail, instance) are all lower case. The OpenAPI
 * document and the JSON Schemas (`/openapi.json`, `/schemas/...`) are those standards' own
 * vocabulary (`operationId`, `additionalProperties`, ...) and are not walked; neither is the MCP
 * protocol's envelope (`structuredContent`, `isError`): only the structured content we define.
 */
const STANDARD_MEMBERS = new Set<string>([
  // JWK (RFC 7517, RFC 8037)
  'kty',
  'crv',
  'x',
  'kid',
  'use',
  'alg',
  // RFC 9457 problem documents
  'type',
  'title',
  'status',
  'detail',
  'instance',
]);

const CAMEL = /[a-z0-9][A-Z]/;

/** Every member name in `value` that is camelCase, with its path (`$.staleness.ageDays`). */
export function camelCaseMembers(value: unknown, path = '$'): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => camelCaseMembers(v, `${path}[${i}]`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, v]) => [
    ...(CAMEL.test(key) && !STANDARD_MEMBERS.has(key) ? [`${path}.${key}`] : []),
    ...camelCaseMembers(v, `${path}.${key}`),
  ]);
}

/** The JSON lines of a command's output (stdout, or stderr's progress lines), each parsed. */
export const jsonLines = (text: string): unknown[] =>
  text
    .split('\n')
    .filter((l) => l.startsWith('{') || l.startsWith('['))
    .map((l) => JSON.parse(l) as unknown);

/** The camelCase members of every JSON line of a command's stdout and stderr, each with where it was. */
export function camelCaseInOutput(run: { stdout: string; stderr: string }): string[] {
  return [
    ...jsonLines(run.stdout).flatMap((j) => camelCaseMembers(j, 'stdout')),
    ...jsonLines(run.stderr).flatMap((j) => camelCaseMembers(j, 'stderr')),
  ];
}
