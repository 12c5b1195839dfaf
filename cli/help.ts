import { stylerFor } from './colour.ts';
import type { Env } from './config.ts';

/** Help is written for an 80-column terminal, whatever the terminal: it is also read in logs and docs. */
export const HELP_WIDTH = 80;

export interface HelpEntry {
  term: string;
  description: string;
}

export interface HelpDocument {
  usage: string;
  description: string;
  /** `stacked`: the term on its own line, its description indented below (long flag names); `columns`: short terms beside their descriptions. */
  sections: { title: string; entries: HelpEntry[]; layout: 'stacked' | 'columns' }[];
  footer?: string;
}

/** A command's help as text no wider than {@link HELP_WIDTH}, styled only for a terminal (`stream`, where it goes). */
export function renderHelp(doc: HelpDocument, stream: { isTTY?: boolean }, env: Env): string {
  const style = stylerFor(stream, env);
  const out = [`${style('bold', 'Usage:')} ${doc.usage}`, '', ...wrap(doc.description, 0), ''];
  for (const section of doc.sections) {
    out.push(style('bold', `${section.title}:`));
    const column = Math.max(...section.entries.map((e) => e.term.length)) + 4;
    for (const { term, description } of section.entries) {
      if (section.layout === 'stacked') {
        out.push(`  ${style('cyan', term)}`, ...wrap(description, 6));
      } else {
        const [first = '', ...rest] = wrap(description, column);
        out.push(`  ${style('cyan', term)}${' '.repeat(column - 2 - term.length)}${first.slice(column)}`, ...rest);
      }
    }
    out.push('');
  }
  if (doc.footer) out.push(...wrap(doc.footer, 0), '');
  return out.join('\n');
}

/** Words of `text` in lines of at most HELP_WIDTH columns, each indented by `indent` spaces; a longer word gets a line of its own. */
export function wrap(text: string, indent: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && indent + line.length + 1 + word.length > HELP_WIDTH) {
      lines.push(' '.repeat(indent) + line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  lines.push(' '.repeat(indent) + line);
  return lines;
}
