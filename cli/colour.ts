import type { Env } from './config.ts';

/**
 * Whether to colour what goes to `stream`: never into a pipe or a file, so a log or `| cat`
 * holds no escape codes. FORCE_COLOR decides first (as in Node.js itself: unset, or '', '1',
 * '2', '3', 'true' turn colour on; anything else off), then NO_COLOR (https://no-color.org:
 * any non-empty value turns it off), then whether the stream is a terminal (not a dumb one).
 */
export function colourEnabled(stream: { isTTY?: boolean }, env: Env): boolean {
  const force = env.FORCE_COLOR;
  if (force !== undefined) return ['', '1', '2', '3', 'true'].includes(force);
  if (env.NO_COLOR) return false;
  return stream.isTTY === true && env.TERM !== 'dumb';
}

// SGR codes, on and off. (node:util's styleText decides by the stream itself, differently on each Node line.)
const STYLES = { bold: ['\x1b[1m', '\x1b[22m'], red: ['\x1b[31m', '\x1b[39m'], cyan: ['\x1b[36m', '\x1b[39m'] } as const;

/** A styler for one stream: the text styled when colour is on there, else the text as is. */
export function stylerFor(stream: { isTTY?: boolean }, env: Env): (style: keyof typeof STYLES, text: string) => string {
  const on = colourEnabled(stream, env);
  return (style, text) => (on ? `${STYLES[style][0]}${text}${STYLES[style][1]}` : text);
}
