/**
 * The text of the first `<name>` element of an S3 answer (a listing, an upload id, an error
 * code), entities decoded; null without one. S3's answers are flat, generated XML: the few
 * values read from them need no parser.
 */
export function xmlText(xml: string | Buffer, name: string): string | null {
  const m = new RegExp(`<${name}>([^<]*)</${name}>`).exec(typeof xml === 'string' ? xml : xml.toString('utf8'));
  if (!m) return null;
  return m[1]!.replace(/&(quot|apos|lt|gt|amp|#34|#39);/g, (_, e: string) => ENTITIES[e]!);
}

const ENTITIES: Record<string, string> = { quot: '"', apos: "'", lt: '<', gt: '>', amp: '&', '#34': '"', '#39': "'" };
