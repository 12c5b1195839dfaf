/**
 * The CLI meets the process in one place: its shell (cli/cli.ts, which bin/mvr.js loads) hands
 * the process's environment and output streams to the entry point and sets the exit code from
 * what it returns. Every other file under cli/ writes to and reads from the run's `io`, so a
 * command runs the same in a test process as in its own, and two runs side by side share nothing.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/project.ts';

const CLI = join(ROOT, 'cli');
const SHELL = 'cli.ts';
/** What only the shell may touch: the process's output streams, exit code and environment (also as `node:process` exports). */
const PROCESS_IO = /\bprocess\.(stdout|stderr|exitCode|env)\b|from\s+['"](node:)?process['"]/;

describe("the CLI's process I/O", () => {
  const files = (readdirSync(CLI, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts'));

  it('only the shell touches process.stdout, process.stderr, process.exitCode and process.env', () => {
    expect(files).toContain(join('commands', 'build.ts'));
    expect(PROCESS_IO.test(readFileSync(join(CLI, SHELL), 'utf8'))).toBe(true);
    const offenders = files.flatMap((file) => {
      if (file === SHELL) return [];
      return readFileSync(join(CLI, file), 'utf8')
        .split('\n')
        .flatMap((line, i) => (PROCESS_IO.test(line) && !/^\s*(\/\/|\*)/.test(line) ? [`cli/${file}:${i + 1}: ${line.trim()}`] : []));
    });
    expect(offenders).toEqual([]);
  });
});
