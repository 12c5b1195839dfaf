/**
 * The architecture, as rules on the source tree: which folder may import which, no import
 * cycles, no Node internals, and files of house size. The table below is the statement.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Folder -> the folders its files may import (relatively). Packages and node builtins are always
 * allowed; the portable verifier (packages/verifier/src) is imported by its package name only.
 */
const MAY_IMPORT: Record<string, readonly string[]> = {
  'packages/verifier/src': ['packages/verifier/src'],
  core: ['core'],
  storage: ['core', 'storage'],
  keyring: ['core', 'keyring'],
  access: ['core', 'access'],
  service: ['core', 'storage', 'keyring', 'service'],
  builder: ['core', 'storage', 'keyring', 'witness', 'witness/build-phase', 'builder'],
  mcp: ['core', 'service', 'mcp'],
  gateway: ['core', 'storage', 'access', 'service', 'mcp', 'gateway'],
  clients: ['core', 'clients'],
  // `mvr mirror`: reads a bucket (storage) or a gateway (clients), checks with the service's rules, swaps in as a build does.
  mirror: ['core', 'storage', 'service', 'builder', 'clients', 'mirror'],
  witness: ['core', 'witness'],
  // The build's witnessing phase and refresh: the build's own step, called by the build, so it imports nothing of it
  // (the log's tiles are read through storage/, below both).
  'witness/build-phase': ['core', 'storage', 'witness', 'witness/build-phase'],
  cli: [
    'core',
    'storage',
    'keyring',
    'access',
    'service',
    'builder',
    'mcp',
    'gateway',
    'clients',
    'witness',
    'witness/build-phase',
    'mirror',
    'cli',
  ],
  // The bin runs the CLI as compiled (dist/cli/cli.js), never the TypeScript.
  bin: ['dist', 'bin'],
  // The benchmarks drive the product from outside, as the CLI does (with the tests' local
  // S3-compatible server and their helpers for a build's packs, test/support/); the verify page is bundled
  // for the browser and takes the verifier by its package name, and the domain rule from core.
  bench: ['core', 'storage', 'keyring', 'access', 'service', 'builder', 'gateway', 'clients', 'mirror', 'bench', 'test'],
  web: ['core', 'web'],
};
/** Strings that name Node internals; no source file mentions them. */
const NODE_INTERNALS = ['_http_', 'process.binding', 'internalBinding'];
/**
 * The most lines a source file may have, tests and benchmarks included. Files are split by topic, so a long
 * file is a question, not a failure, until it is well past the house size of about 250.
 */
const MAX_LINES = 400;
/** Folders held to the size limit besides the rule table's: the tests and the benchmarks. */
const SIZED_TOO = ['test', 'bench'];

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const FOLDERS = Object.keys(MAY_IMPORT);
const SOURCE_EXT = new Set(['.ts', '.mjs', '.js']);

function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : walk(path);
    return entry.isFile() && SOURCE_EXT.has(extname(entry.name)) ? [path] : [];
  });
}

/** Repository-relative path with forward slashes, e.g. `gateway/routes/verify.ts`. */
const rel = (path: string) => relative(ROOT, path).split(sep).join('/');
/** The rule table's folder a file is in (the longest that holds it). */
const folderOf = (relPath: string) =>
  FOLDERS.filter((f) => relPath.startsWith(`${f}/`)).sort((a, b) => b.length - a.length)[0] ?? relPath.split('/')[0]!;

/** Every static and dynamic import specifier of a module's text: `from '...'`, `import('...')`, `import '...'`. */
function importSpecifiers(text: string): string[] {
  const patterns = [/\bfrom\s*['"]([^'"]+)['"]/g, /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g, /\bimport\s*['"]([^'"]+)['"]/g];
  return patterns.flatMap((re) => [...text.matchAll(re)].map((m) => m[1]!));
}

/** The specifiers a module imports for types only (`import type ... from`, `export type ... from`). */
function typeOnlySpecifiers(text: string): Set<string> {
  return new Set([...text.matchAll(/\b(?:import|export)\s+type\s[^;]*?\bfrom\s*['"]([^'"]+)['"]/g)].map((m) => m[1]!));
}

/** The file a relative specifier names, or null when none exists. */
function resolveRelative(fromFile: string, specifier: string): string | null {
  const base = resolve(dirname(fromFile), specifier);
  const candidates = [base, `${base}.ts`, `${base}.js`, `${base}.mjs`, join(base, 'index.ts'), join(base, 'index.js')];
  return candidates.find((c) => existsSync(c) && statSync(c).isFile()) ?? null;
}

/** Every import cycle reachable in a graph, each as a path whose first and last node are the same. */
function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      const s = state.get(next);
      if (s === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (s === undefined) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of [...graph.keys()].sort()) if (!state.has(node)) visit(node);
  return cycles;
}

interface Edge {
  from: string;
  specifier: string;
  to: string | null;
  typeOnly: boolean;
}

const files = FOLDERS.flatMap((folder) => walk(join(ROOT, folder))).sort();
const texts = new Map(files.map((file) => [rel(file), readFileSync(file, 'utf8')]));
const edges: Edge[] = files.flatMap((file) => {
  const text = texts.get(rel(file))!;
  const typeOnly = typeOnlySpecifiers(text);
  const values = new Set(importSpecifiers(text.replace(/\b(?:import|export)\s+type\s[^;]*?\bfrom\s*['"][^'"]+['"]/g, '')));
  return [...new Set(importSpecifiers(text))]
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => {
      const target = resolveRelative(file, specifier);
      return { from: rel(file), specifier, to: target && rel(target), typeOnly: typeOnly.has(specifier) && !values.has(specifier) };
    });
});
/** `a -> b` for a value import, `a -type-> b` for an import of types only. */
const arrow = (from: string, to: string) => (edges.some((e) => e.from === from && e.to === to && !e.typeOnly) ? ' -> ' : ' -type-> ');
const graph = new Map<string, string[]>([...texts.keys()].map((file) => [file, []]));
for (const edge of edges) if (edge.to && graph.has(edge.to)) graph.get(edge.from)!.push(edge.to);

describe('the source tree', () => {
  it('has source files in every folder of the rule table', () => {
    for (const folder of FOLDERS)
      expect(
        files.some((f) => rel(f).startsWith(`${folder}/`)),
        folder,
      ).toBe(true);
    expect(edges.length).toBeGreaterThan(50);
  });

  it('every relative import resolves to a file', () => {
    const unresolved = edges.filter((e) => e.to === null).map((e) => `${e.from} -> ${e.specifier}`);
    expect(unresolved, 'relative imports that name no file').toEqual([]);
  });
});

describe('layering', () => {
  it('each folder imports only the folders the rule table allows', () => {
    const violations = edges
      .filter((e) => e.to !== null)
      .filter((e) => !MAY_IMPORT[folderOf(e.from)]!.includes(folderOf(e.to!)))
      .map((e) => `${e.from} -> ${e.to} (${folderOf(e.from)}/ may import ${MAY_IMPORT[folderOf(e.from)]!.join(', ')})`);
    expect(violations, 'imports that break the layering').toEqual([]);
  });

  it('no two rooms may import each other: the table allows no pair both ways, and no chain of rooms comes back', () => {
    const bothWays = FOLDERS.flatMap((a) =>
      MAY_IMPORT[a]!.filter((b) => b !== a && a < b && MAY_IMPORT[b]?.includes(a)).map((b) => `${a} <-> ${b}`),
    );
    expect(bothWays, 'pairs of rooms the table lets import each other').toEqual([]);
    const rooms = new Map<string, string[]>(FOLDERS.map((f) => [f, []]));
    for (const e of edges) {
      const [from, to] = [folderOf(e.from), e.to && folderOf(e.to)];
      if (to && from !== to && rooms.has(from) && !rooms.get(from)!.includes(to)) rooms.get(from)!.push(to);
    }
    expect(findCycles(rooms), 'rooms whose imports come back to them').toEqual([]);
  });

  it('nothing imports bin/ except bin/ itself', () => {
    const intoBin = edges.filter((e) => e.to?.startsWith('bin/') && !e.from.startsWith('bin/')).map((e) => `${e.from} -> ${e.to}`);
    expect(intoBin).toEqual([]);
  });

  it('only storage/ knows a backend: nothing else imports the folder, origin or bucket modules', () => {
    const backends = /^storage\/(s3\/|folder\.ts$|http-origin\.ts$)/;
    const intoBackends = edges
      .filter((e) => e.to && backends.test(e.to) && !e.from.startsWith('storage/'))
      .map((e) => `${e.from} -> ${e.to}`);
    expect(intoBackends).toEqual([]);
  });
});

describe('import cycles', () => {
  it('there are none among the source files', () => {
    // Type-only imports count: a cycle of types is still two modules that know each other.
    const cycles = findCycles(graph).map((cycle) => cycle.map((node, i) => (i === 0 ? node : arrow(cycle[i - 1]!, node) + node)).join(''));
    expect(cycles, 'import cycles').toEqual([]);
  });

  it('the cycle finder reports a cycle as its path, and none in a DAG', () => {
    const cyclic = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', []],
    ]);
    expect(findCycles(cyclic)).toEqual([['a', 'b', 'c', 'a']]);
    expect(findCycles(new Map([['a', ['a']]]))).toEqual([['a', 'a']]);
    const dag = new Map([
      ['a', ['b', 'c']],
      ['b', ['c']],
      ['c', []],
    ]);
    expect(findCycles(dag)).toEqual([]);
  });

  it('the scan sees static, dynamic, side-effect and re-export specifiers', () => {
    const text = [
      "import { x } from './a.ts';",
      "import type { Y } from '../core/b.ts';",
      "export { z } from './c.ts';",
      "import './d.ts';",
      "const m = await import('./e.ts');",
      "import {\n  p,\n  q,\n} from './f.ts';",
      "import { readFile } from 'node:fs/promises';",
    ].join('\n');
    expect(importSpecifiers(text).sort()).toEqual(['../core/b.ts', './a.ts', './c.ts', './d.ts', './e.ts', './f.ts', 'node:fs/promises']);
  });
});

describe('source hygiene', () => {
  it(`no source file mentions Node internals (${NODE_INTERNALS.join(', ')})`, () => {
    const offenders = [...texts].flatMap(([file, text]) => NODE_INTERNALS.filter((s) => text.includes(s)).map((s) => `${file}: ${s}`));
    expect(offenders).toEqual([]);
  });

  it('only core/ed25519.ts verifies Ed25519 with node:crypto: every other check goes through its encoding rules', () => {
    const verifiesDirectly = /import\s*\{[^}]*\bverify\b[^}]*\}\s*from\s*['"](?:node:)?crypto['"]|\bcrypto\.verify\b|\bcreateVerify\b/;
    // The benchmarks measure the raw primitive's capacity; they check nothing.
    const offenders = [...texts]
      .filter(([file, text]) => file !== 'core/ed25519.ts' && !file.startsWith('bench/') && verifiesDirectly.test(text))
      .map(([file]) => file);
    expect(offenders).toEqual([]);
    expect(verifiesDirectly.test(texts.get('core/ed25519.ts')!)).toBe(true);
  });

  it(`every source, test and benchmark file is at most ${MAX_LINES} lines`, () => {
    const sized = new Map(texts);
    for (const file of SIZED_TOO.flatMap((folder) => walk(join(ROOT, folder)))) sized.set(rel(file), readFileSync(file, 'utf8'));
    expect(sized.has('test/architecture/imports.test.ts')).toBe(true);
    const offenders = [...sized]
      .map(([file, text]) => [file, text.replace(/\n$/, '').split('\n').length] as const)
      .filter(([, lines]) => lines > MAX_LINES)
      .map(([file, lines]) => `${file}: ${lines} lines`);
    expect(offenders).toEqual([]);
  });
});
