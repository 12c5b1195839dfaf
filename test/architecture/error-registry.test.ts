/**
 * The error registry is the one place codes live: every code the sources raise is in it, the
 * OpenAPI document's codes and statuses come from it, what the HTTP shells throw has a status
 * in it, and the CLI's exit codes are read from it.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, extname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  CanonicalizationError,
  ConfigError,
  ERROR_REGISTRY,
  type ErrorCode,
  exitCodeOf,
  HTTP_ERROR_CODES,
  InvalidKeySetError,
  NoLogError,
  PolicyError,
  VERIFIER_ERROR_CODES,
} from '../../core/errors.ts';
import { openApiDocument } from '../../gateway/openapi.ts';

/** The folders whose sources are scanned. */
const SOURCE_FOLDERS = [
  'packages/verifier/src',
  'core',
  'storage',
  'service',
  'access',
  'keyring',
  'builder',
  'gateway',
  'mcp',
  'cli',
  'clients',
  'witness',
  'mirror',
  'bin',
];
/**
 * The code that answers a request (the routes, the gate, the records service and the stores it
 * reads): what it throws must have a status. Start-up code (loading key files,
 * listening) raises INVALID_CONFIG or INVALID_KEY, which stop the process instead.
 */
const REQUEST_PATH = [
  'gateway/app.ts',
  'gateway/auth.ts',
  'gateway/answer.ts',
  'gateway/body.ts',
  'gateway/query.ts',
  'service/batch.ts',
  'service/history.ts',
  'gateway/problem.ts',
  'gateway/routes/',
  'service/records.ts',
  'storage/folder.ts',
  'storage/http-origin.ts',
  'storage/origin-transport.ts',
  'storage/s3/store.ts',
  'storage/public-files.ts',
  'storage/key-set-source.ts',
  'service/verified-cache.ts',
  'access/rate-limit.ts',
  // Not mcp/: a tool's failure is an isError result naming its code (mcp/tool-error.ts), never an HTTP
  // status, and a tool's arguments fail as the CLI's flags do (max_age INVALID_USAGE, as --max-age).
];
/** The call shapes that name a code: `super('X'`, `new MvrError('X'`, `code: 'X'`, `fail('X'`. */
const CODE_SHAPES = [
  /\bsuper\(\s*'([A-Z][A-Z_]+)'/g,
  /\bnew MvrError\(\s*'([A-Z][A-Z_]+)'/g,
  /\bcode:\s*'([A-Z][A-Z_]+)'/g,
  /\bfail\(\s*'([A-Z][A-Z_]+)'/g,
];

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const REGISTRY_CODES = Object.keys(ERROR_REGISTRY) as ErrorCode[];
const isRegistryCode = (code: string): code is ErrorCode => Object.hasOwn(ERROR_REGISTRY, code);

function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : walk(path);
    return entry.isFile() && ['.ts', '.mjs', '.js'].includes(extname(entry.name)) ? [path] : [];
  });
}

interface Use {
  file: string;
  line: number;
  code: string;
  how: string;
}

const sources = SOURCE_FOLDERS.flatMap((folder) => walk(join(ROOT, folder)))
  .sort()
  .map((path) => ({ file: relative(ROOT, path).split(sep).join('/'), text: readFileSync(path, 'utf8') }));
const lineOf = (text: string, index: number) => text.slice(0, index).split('\n').length;

/** Every code literal in one of the call shapes, with where it is. */
const literalUses: Use[] = sources.flatMap(({ file, text }) =>
  CODE_SHAPES.flatMap((re) => [...text.matchAll(re)].map((m) => ({ file, line: lineOf(text, m.index), code: m[1]!, how: m[0] }))),
);

/** The application's error classes: core/errors.ts and the files of one topic it re-exports. */
const ERROR_CLASS_FILES = ['core/errors.ts', 'core/audit-problems.ts', 'core/lock-errors.ts'];

/** Error class -> its code, read from the classes of the application's error files and the verifier package's errors.ts (a subclass without `static readonly code = 'X'` inherits its parent's). */
function errorClassCodes(): Map<string, string> {
  const classes = [...ERROR_CLASS_FILES, 'packages/verifier/src/errors.ts'].flatMap((file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    return [...text.matchAll(/\bclass (\w+) extends (\w+)/g)].map((m, i, all) => {
      const body = text.slice(m.index, all[i + 1]?.index ?? text.length);
      return { name: m[1]!, parent: m[2]!, code: /\bstatic readonly code = '([A-Z][A-Z_]+)'/.exec(body)?.[1] };
    });
  });
  const codes = new Map<string, string>();
  for (let changed = true; changed; ) {
    changed = false;
    for (const c of classes) {
      const code = c.code ?? codes.get(c.parent);
      if (code && !codes.has(c.name)) {
        codes.set(c.name, code);
        changed = true;
      }
    }
  }
  return codes;
}
const CLASS_CODES = errorClassCodes();

/** Every `new SomeError(` of a registry error class, as the code it carries. */
const classUses: Use[] = sources.flatMap(({ file, text }) =>
  [...text.matchAll(/\bnew (\w+Error)\(/g)]
    .filter((m) => CLASS_CODES.has(m[1]!))
    .map((m) => ({ file, line: lineOf(text, m.index), code: CLASS_CODES.get(m[1]!)!, how: m[0] })),
);

const where = (u: Use) => `${u.file}:${u.line} ${u.how} -> ${u.code}`;

describe('codes used in the sources', () => {
  it('the scan finds at least 15 distinct codes (it cannot pass vacuously)', () => {
    expect(new Set(literalUses.map((u) => u.code)).size).toBeGreaterThanOrEqual(15);
  });

  it('every code literal in super(, new MvrError(, code: and fail( is a key of ERROR_REGISTRY', () => {
    const unknown = literalUses.filter((u) => !isRegistryCode(u.code)).map(where);
    expect(unknown, 'codes missing from the registry').toEqual([]);
  });

  it('core/errors.ts re-exports every other file of error classes', () => {
    const errors = readFileSync(join(ROOT, 'core/errors.ts'), 'utf8');
    const reExported = ERROR_CLASS_FILES.slice(1).filter((file) => errors.includes(`export * from './${file.slice('core/'.length)}'`));
    expect(reExported).toEqual(ERROR_CLASS_FILES.slice(1));
    const classFiles = walk(join(ROOT, 'core'))
      .map((path) => relative(ROOT, path).split(sep).join('/'))
      .filter((file) => /\bclass \w+ extends (?:MvrError|\w+Error)\b/.test(readFileSync(join(ROOT, file), 'utf8')));
    expect(classFiles.sort()).toEqual([...ERROR_CLASS_FILES].sort());
  });

  it('every error class of core/errors.ts and the verifier package carries a registry code', () => {
    expect(CLASS_CODES.size).toBeGreaterThanOrEqual(15);
    const unknown = [...CLASS_CODES].filter(([, code]) => !isRegistryCode(code)).map(([name, code]) => `${name}: ${code}`);
    expect(unknown).toEqual([]);
  });
});

describe('no bare errors', () => {
  // Scripts and the verify page too: only the tests and the benchmarks may throw an Error of no code.
  const everywhere = [...SOURCE_FOLDERS, 'web', 'scripts'].flatMap((folder) => walk(join(ROOT, folder)));

  it('the scan reads the page and the scripts', () => {
    const files = everywhere.map((path) => relative(ROOT, path).split(sep).join('/'));
    expect(files).toEqual(expect.arrayContaining(['web/verify/app.ts', 'scripts/s3-local.ts', 'storage/s3/bucket.ts']));
  });

  it('no source makes a plain Error: every throw and rejection outside tests and benchmarks is a registry error', () => {
    const bare = everywhere.flatMap((path) => {
      const text = readFileSync(path, 'utf8');
      const file = relative(ROOT, path).split(sep).join('/');
      return [...text.matchAll(/\bnew Error\(/g)].map((m) => `${file}:${lineOf(text, m.index)}`);
    });
    expect(bare, 'plain Errors: use (or add) a class of core/errors.ts').toEqual([]);
  });
});

describe("the verifier package's codes", () => {
  it('every code the package lists is in the one registry', () => {
    expect(VERIFIER_ERROR_CODES.length).toBeGreaterThanOrEqual(15);
    expect(VERIFIER_ERROR_CODES.filter((code) => !isRegistryCode(code))).toEqual([]);
  });

  it("every code named in the package's sources is one the package lists", () => {
    const listed = new Set<string>(VERIFIER_ERROR_CODES);
    const inPackage = [...literalUses, ...classUses].filter((u) => u.file.startsWith('packages/verifier/src/'));
    expect(inPackage.length).toBeGreaterThan(10);
    expect(inPackage.filter((u) => !listed.has(u.code)).map(where)).toEqual([]);
  });

  it('each error class has a static code, and its instances carry it', () => {
    const errors = [
      new CanonicalizationError('$', 'x'),
      new InvalidKeySetError('x'),
      new PolicyError('p', 1, 'x'),
      new ConfigError('x'),
      new NoLogError('x'),
    ];
    for (const error of errors) expect(error.code).toBe((error.constructor as unknown as { code: string }).code);
  });
});

describe('codes the HTTP API can answer with', () => {
  const inHttpFolders = (u: Use) => REQUEST_PATH.some((prefix) => u.file.startsWith(prefix));
  const thrown = [...literalUses, ...classUses].filter(inHttpFolders);

  it('the scan finds codes raised on the request path', () => {
    expect(new Set(thrown.map((u) => u.code)).size).toBeGreaterThanOrEqual(5);
  });

  it('every code raised on the request path has an HTTP status in the registry', () => {
    const withoutStatus = thrown.filter((u) => !isRegistryCode(u.code) || ERROR_REGISTRY[u.code].status === null).map(where);
    expect(withoutStatus, 'codes without an HTTP status').toEqual([]);
  });
});

describe('the OpenAPI document and the registry', () => {
  const doc = openApiDocument({ issuer: 'verify.example.com', schemaUrl: 'https://verify.example.com/schemas/verification/v1' }) as any;

  it('HTTP_ERROR_CODES are exactly the registry codes with a status', () => {
    expect(HTTP_ERROR_CODES).toEqual(REGISTRY_CODES.filter((code) => ERROR_REGISTRY[code].status !== null));
  });

  it("the Problem schema's code enum is exactly HTTP_ERROR_CODES", () => {
    expect(doc.components.schemas.Problem.properties.code.enum).toEqual([...HTTP_ERROR_CODES]);
  });

  it('every error response of every operation has a status some registry code has', () => {
    const statuses = new Set(
      REGISTRY_CODES.map((code) => ERROR_REGISTRY[code].status)
        .filter((s) => s !== null)
        .map(String),
    );
    const responses = Object.entries(doc.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>).flatMap(
      ([path, item]) =>
        Object.entries(item).flatMap(([method, op]) =>
          Object.keys(op.responses).map((status) => ({ at: `${method.toUpperCase()} ${path} ${status}`, status })),
        ),
    );
    expect(responses.length).toBeGreaterThan(10);
    const errors = responses.filter((r) => /^[45]/.test(r.status));
    expect(errors.length).toBeGreaterThan(0);
    expect(
      errors.filter((r) => !statuses.has(r.status)).map((r) => r.at),
      'error statuses no registry code has',
    ).toEqual([]);
  });
});

describe('exit codes', () => {
  it.each(REGISTRY_CODES)('exitCodeOf(%s) is the registry exit', (code) => {
    expect(exitCodeOf(code)).toBe(ERROR_REGISTRY[code].exit);
  });

  it.each(['NOPE', '', 'invalid_domain', 'toString', '__proto__'])('exitCodeOf(%j) is 1', (code) => {
    expect(exitCodeOf(code)).toBe(1);
  });
});
