import canonicalize from 'canonicalize';
import { CanonicalizationError } from './errors.ts';

const encoder = new TextEncoder();

/**
 * RFC 8785 (JCS) canonical JSON text of a plain JSON value.
 *
 * The `canonicalize` package silently drops `undefined` members and calls `toJSON`, which
 * would sign something other than what the caller holds; so the value is checked first and
 * anything JCS cannot express exactly (NaN, Infinity, undefined, bigint, functions, symbols,
 * Dates, Maps, class instances, lone surrogates, cycles) is refused with the member's path.
 *
 * @example canonicalJson({ b: 1, a: [true, null] }) // '{"a":[true,null],"b":1}'
 */
export function canonicalJson(value: unknown): string {
  assertJsonValue(value, '$', new Set());
  const text = canonicalize(value);
  if (text === undefined) throw new CanonicalizationError('$', 'value has no JSON form');
  return text;
}

/**
 * RFC 8785 text of each top-level member of a plain object, as `"name":value`, sorted as JCS
 * sorts them (UTF-16 code units). An object's canonical text is `{` + these joined by `,` + `}`,
 * so a signer can canonicalize a record once and produce both the signed bytes (without
 * `key_id` and `signature`) and the stored bytes (with them) from the same parts.
 */
export function canonicalMembers(value: Record<string, unknown>): Map<string, string> {
  assertJsonValue(value, '$', new Set());
  const members = new Map<string, string>();
  for (const key of Object.keys(value).sort()) members.set(key, `${JSON.stringify(key)}:${canonicalize(value[key])}`);
  return members;
}

/** Joins member texts from {@link canonicalMembers} (plus extra members) into canonical object text. */
export function joinMembers(members: Map<string, string>, extra: Record<string, string> = {}): string {
  const all = new Map(members);
  for (const [key, text] of Object.entries(extra)) all.set(key, `${JSON.stringify(key)}:${JSON.stringify(text)}`);
  return `{${[...all.keys()]
    .sort()
    .map((k) => all.get(k))
    .join(',')}}`;
}

/** UTF-8 bytes of {@link canonicalJson}: what is signed and what is served. */
export function canonicalBytes(value: unknown): Uint8Array {
  return encoder.encode(canonicalJson(value));
}

function assertJsonValue(value: unknown, path: string, seen: Set<object>): void {
  switch (typeof value) {
    case 'string':
      if (hasLoneSurrogate(value)) throw new CanonicalizationError(path, 'string has a lone surrogate');
      return;
    case 'boolean':
      return;
    case 'number':
      if (!Number.isFinite(value)) throw new CanonicalizationError(path, `${value} is not a JSON number`);
      return;
    case 'object': {
      if (value === null) return;
      if (seen.has(value)) throw new CanonicalizationError(path, 'circular reference');
      seen.add(value);
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          if (!(i in value)) throw new CanonicalizationError(`${path}[${i}]`, 'sparse array hole');
          assertJsonValue(value[i], `${path}[${i}]`, seen);
        }
      } else {
        const proto = Object.getPrototypeOf(value);
        if (proto !== Object.prototype && proto !== null) {
          throw new CanonicalizationError(path, `${proto?.constructor?.name ?? 'object'} is not a plain JSON object`);
        }
        for (const key of Object.keys(value)) {
          if (hasLoneSurrogate(key)) throw new CanonicalizationError(`${path}.${key}`, 'member name has a lone surrogate');
          assertJsonValue((value as Record<string, unknown>)[key], `${path}.${key}`, seen);
        }
      }
      seen.delete(value);
      return;
    }
    default:
      throw new CanonicalizationError(path, `${typeof value} is not a JSON value`);
  }
}

/** True when a string holds a UTF-16 surrogate without its pair (JCS cannot express it). */
export function hasLoneSurrogate(s: string): boolean {
  // Fast path: most strings have no surrogates at all.
  if (!/[\ud800-\udfff]/.test(s)) return false;
  return /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);
}
