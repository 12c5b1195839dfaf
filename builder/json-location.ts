// Kept apart from inputs.ts, which lists files with fast-glob: build workers need only this,
// and their bundle then carries no file-listing code.

/** `:line:column` of a JSON.parse error, from the position V8 reports. */
export function jsonErrorLocation(text: string, error: Error): string {
  const m = /position (\d+)/.exec(error.message);
  if (!m) return '';
  const pos = Number(m[1]);
  const before = text.slice(0, pos);
  const line = before.split('\n').length;
  const column = pos - before.lastIndexOf('\n');
  return `:${line}:${column}`;
}
