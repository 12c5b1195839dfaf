/**
 * Docs, decisions and comments name only paths that exist. A path named in a Markdown file or a
 * source file (a repository path under one of its top-level folders, such as
 * `gateway/routes/history.ts`, or a Markdown link) must be a file or folder of the repository; a
 * file moved without its mentions (about 26 of them once) is how a reader is sent nowhere.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/project.ts';

const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
/** Every tracked file and every folder above one. */
const exists = new Set(tracked.flatMap((f) => f.split('/').map((_, i, parts) => parts.slice(0, i + 1).join('/'))));
const TOP = [...new Set(tracked.filter((f) => f.includes('/')).map((f) => f.split('/')[0]!))];

/**
 * What a path may name though it is not in the repository, each with why: what commands write
 * when they run (never committed), and the folders the service's own layout and the sample
 * project's commands create.
 */
const ALLOWED: [RegExp, string][] = [
  [/^bench\/out(\/|$)/, 'written by the benchmarks when they run'],
  [/^audits\/(a|b|big)\.jsonl?$/, "an operator's own audit files, named in examples of the build's messages"],
  [
    /^audits\/(verified|provisional|flagged)\.json$/,
    'the example audits `mvr init` writes into a project of its own (templates/init/audits/)',
  ],
  [/^dist(\/|$)/, 'the compiled output of `npm run build`'],
  [/^packages\/verifier\/dist(\/|$)/, "the verifier package's compiled output"],
  [/^node_modules(\/|$)/, 'installed by npm'],
];

/**
 * Code since removed, named where the measurements of it are kept: the benchmarks archive says at
 * its top that it records code since removed. Only these, only there.
 */
const REMOVED_IN_ARCHIVE = new Set(
  ['bench/lane-floor.mjs', 'gateway/http', 'core/latin1.ts', 'test/ops/workflows.test.ts', 'test/log/transparency-log.test.ts'].map(
    (p) => `docs/benchmarks-archive-2026.md: ${p}`,
  ),
);

/** This file names missing paths on purpose, to show the check finds them. */
const SELF = 'test/architecture/named-paths.test.ts';

/** Where the names are looked for: Markdown and source files the project writes (not test vectors, which are data). */
const scanned = tracked.filter((f) => /\.(md|ts|mjs|js|sh|ya?ml)$/.test(f) && !f.startsWith('test/vectors/') && f !== SELF);

/** A repository path: a top-level folder, then a path ending in a file with an extension, or a folder's slash. */
const REPO_PATH = new RegExp(`(?<![\\w./@-])(?:${TOP.map((t) => t.replace('.', '\\.')).join('|')})/[\\w./-]*`, 'g');
/** A relative Markdown link target. */
const LINK = /\]\(([^)\s#]+)(?:#[^)]*)?\)/g;

/** The paths `text` (the content of `file`) names that do not exist, as `file: path`. */
function missingIn(file: string, text = readFileSync(join(ROOT, file), 'utf8')): string[] {
  const missing: string[] = [];
  const check = (path: string) => {
    const clean = path.replace(/[.,;:]+$/, '').replace(/\/$/, '');
    if (!clean || exists.has(clean) || ALLOWED.some(([re]) => re.test(clean))) return;
    missing.push(clean);
  };
  for (const m of text.matchAll(REPO_PATH)) {
    const path = m[0];
    // A path with a file name or a folder's trailing slash; a bare `core/x` without either is prose ("core/shell").
    if (/\.[a-z]{1,5}[.,;:]*$/.test(path) || path.endsWith('/')) check(path);
  }
  if (file.endsWith('.md')) {
    for (const m of text.matchAll(LINK)) {
      const target = m[1]!;
      if (/^[a-z]+:/.test(target) || target.startsWith('/')) continue;
      check(normalize(join(dirname(file), target)));
    }
  }
  return [...new Set(missing)].map((p) => `${file}: ${p}`).filter((named) => !REMOVED_IN_ARCHIVE.has(named));
}

describe('paths named in docs and comments', () => {
  it('the check sees what it is about: tracked files, and the Markdown and sources naming them', () => {
    expect(scanned.length).toBeGreaterThan(300);
    expect(exists.has('gateway/routes/history.ts')).toBe(true);
    const text = 'See gateway/routes/nope.ts, `test/support/`, [the map](../service/map-index.ts), [gone](./gone.md) and dist/cli/cli.js.';
    expect(missingIn('docs/example.md', text)).toEqual(['docs/example.md: gateway/routes/nope.ts', 'docs/example.md: docs/gone.md']);
  });

  it('every repository path named in Markdown, sources and their comments exists', () => {
    expect(scanned.flatMap((f) => missingIn(f))).toEqual([]);
  });
});
