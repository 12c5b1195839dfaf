import type { CliOutput } from './io.ts';

/**
 * Progress of a long command (`build`, `publish`, `pull`) on stderr. On a terminal one line is
 * redrawn in place at each update. Anywhere else (CI, a pipe, a log file) a plain line, or with
 * `--json` one JSON object, is written every `intervalMs` whatever happens, so a silent step
 * (a swap, a log append) still shows the command is alive; the last line, on success, says done.
 */
export interface ProgressOptions {
  /** The command, first on every line and the `progress` member of every JSON line. */
  command: string;
  json: boolean;
  /** How often a line is written when stderr is not a terminal (MVR_PROGRESS_MS). */
  intervalMs: number;
  /** Where the lines go: the run's stderr. */
  stream: CliOutput;
  clock?: () => number;
}

/** The state of the work: `text` for people, `fields` (numbers or names, snake_case) for `--json`. */
export interface ProgressState {
  text: string;
  fields: Record<string, number | string>;
}

export interface Progress {
  /** `announce`: a new phase began, so without a terminal a line is written now, not only at the next interval. */
  update(state: ProgressState, announce?: boolean): void;
  /** On success: the final line (not on a terminal, where the summary follows on stdout). */
  finish(): void;
  /** Always, success or not: stops the timer and clears a drawn line. */
  stop(): void;
}

export function createProgress(opts: ProgressOptions): Progress {
  const stream = opts.stream;
  const clock = opts.clock ?? Date.now;
  const started = clock();
  const redraw = stream.isTTY === true && !opts.json;
  let latest: ProgressState | null = null;
  let drawn = false;

  const line = (done: boolean) => {
    const elapsedMs = Math.round(clock() - started);
    if (opts.json)
      return `${JSON.stringify({ progress: opts.command, ...(done ? { done: true } : {}), ...latest?.fields, elapsed_ms: elapsedMs })}\n`;
    // Done before any update (nothing to do: "mirror: done"), the line says done alone, not "done, starting".
    const what = done ? (latest ? `done, ${latest.text}` : 'done') : (latest?.text ?? 'starting');
    return `${opts.command}: ${what} (${(elapsedMs / 1000).toFixed(0)} s)\n`;
  };
  const timer = redraw ? null : setInterval(() => stream.write(line(false)), opts.intervalMs);
  timer?.unref();

  return {
    update(state, announce = false) {
      latest = state;
      if (!redraw) {
        if (announce) stream.write(line(false));
        return;
      }
      stream.write(`\r\x1b[2K${opts.command}: ${state.text}`);
      drawn = true;
    },
    finish() {
      if (timer) clearInterval(timer);
      if (!redraw) stream.write(line(true));
    },
    stop() {
      if (timer) clearInterval(timer);
      if (drawn) stream.write('\r\x1b[2K');
      drawn = false;
    },
  };
}
