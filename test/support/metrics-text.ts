/**
 * Reads the Prometheus text format well enough for tests: each sample line is a name, its labels
 * and a value. Comments (HELP, TYPE) are skipped.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
export type Samples = Sample[];

export function parseMetrics(text: string): Samples {
  const out: Samples = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** The value of the one sample named `name` whose labels are exactly `labels`; throws when there is none. */
export function sampleOf(samples: Samples, name: string, labels: Record<string, string> = {}): number {
  const want = JSON.stringify(Object.entries(labels).sort());
  const found = samples.find((s) => s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === want);
  if (!found) throw new Error(`no sample ${name}${JSON.stringify(labels)} in the scrape`);
  return found.value;
}
