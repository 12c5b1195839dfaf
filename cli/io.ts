import type { Env } from './config.ts';

/**
 * What a CLI run reads and writes besides its files: its environment, and where its output goes.
 * The bin (cli/cli.ts) gives the process's own; the tests give captured text, so a command runs
 * in the test process exactly as the bin runs it, and two runs side by side share nothing.
 */
export interface CliIo {
  /** The variables options are read from (flag, then variable, then default), and FORCE_COLOR, NO_COLOR, TERM. */
  env: Env;
  stdout: CliOutput;
  stderr: CliOutput;
}

/** A place output goes: a terminal (`isTTY`: progress redraws one line, help may be coloured), a pipe or a file. */
export interface CliOutput {
  write(text: string): unknown;
  isTTY?: boolean;
}
