import type { IncomingHttpHeaders } from 'node:http';
import { BlockList, isIPv4, isIPv6 } from 'node:net';
import { ConfigError } from '../core/errors/errors.ts';
import { remembered } from '../core/memo.ts';

/**
 * Who a request without a valid key is counted as, for the per-address quota. Behind a load
 * balancer every request comes from the balancer, so the quota would be one bucket for everyone:
 * with `--trust-proxy CIDR...` the client's address is read from `Forwarded` (RFC 7239) or
 * `X-Forwarded-For`, but only when the peer is a trusted proxy, and only as far as trusted
 * proxies vouch for it (the rightmost address no trusted proxy owns). Anyone can send those
 * headers; only the entries our own proxies appended are worth anything.
 */

/** A list of trusted proxies (`--trust-proxy`): CIDRs or single addresses, IPv4 or IPv6. */
export interface TrustedProxies {
  /** The entries as given, for messages. */
  readonly entries: readonly string[];
  has(address: string): boolean;
}

/**
 * Parses `--trust-proxy` / MVR_TRUST_PROXY: CIDRs or addresses separated by commas or spaces,
 * `10.0.0.0/8, 2001:db8::/32 192.0.2.7`. Throws INVALID_CONFIG naming the first entry that is not one.
 */
export function parseTrustedProxies(text: string): TrustedProxies {
  const entries = text.split(/[\s,]+/).filter(Boolean);
  if (entries.length === 0) throw new ConfigError('names no address or CIDR');
  const list = new BlockList();
  for (const entry of entries) {
    const m = /^([^/]+)(?:\/(\d{1,3}))?$/.exec(entry);
    const address = m ? plainAddress(m[1]!) : null;
    const type = address === null ? null : isIPv4(address) ? 'ipv4' : 'ipv6';
    const prefix = m?.[2] === undefined ? undefined : Number(m[2]);
    if (address === null || (prefix !== undefined && prefix > (type === 'ipv4' ? 32 : 128)))
      throw new ConfigError(`"${entry}" is not an IP address or a CIDR such as 10.0.0.0/8 or 2001:db8::/32`);
    if (prefix === undefined) list.addAddress(address, type!);
    else list.addSubnet(address, prefix, type!);
  }
  return { entries, has: (address) => list.check(address, isIPv4(address) ? 'ipv4' : 'ipv6') };
}

/**
 * The client's address: the peer's, unless the peer is a trusted proxy; then the chain of
 * `Forwarded` `for=` (or `X-Forwarded-For`) entries is walked from the right, past every address
 * a trusted proxy owns, to the first one none does. An entry that is no address (`unknown`, an
 * obfuscated name, garbage) ends the walk at the trusted hop that wrote it. A request carrying
 * both headers with different stories is counted as the proxy that sent it: only a forger sends
 * two, and so forgers share one count and cannot pick a fresh one per request.
 */
export function clientAddress(peer: string | undefined, headers: IncomingHttpHeaders, trusted: TrustedProxies | null): string {
  const from = peerAddress(peer ?? '');
  if (!trusted?.has(from)) return from;
  const forwarded = headers.forwarded === undefined ? null : walk(from, forwardedFor(headers.forwarded), trusted);
  const xff = headers['x-forwarded-for'];
  const listed = xff === undefined ? null : walk(from, String(xff).split(','), trusted);
  if (forwarded !== null && listed !== null && forwarded !== listed) return from;
  return forwarded ?? listed ?? from;
}

/**
 * The peer's address as {@link plainAddress} gives it ('unknown' when it is none), remembered: a
 * connection asks it of every request without a valid key, and the answer depends on the socket's
 * address alone.
 */
const peerAddress = remembered((peer) => plainAddress(peer) ?? 'unknown', { entries: 10_000, longestInput: 64 });

function walk(peer: string, chain: string[], trusted: TrustedProxies): string {
  let client = peer;
  for (let i = chain.length - 1; i >= 0; i--) {
    const address = plainAddress(chain[i]!.trim());
    if (address === null) break;
    client = address;
    if (!trusted.has(address)) break;
  }
  return client;
}

/** The `for=` values of a `Forwarded` field, left to right (elements split on commas outside quotes). */
function forwardedFor(field: string): string[] {
  const out: string[] = [];
  for (const element of field.match(/(?:[^,"]|"(?:\\.|[^"\\])*")+/g) ?? []) {
    const m = /(?:^|;)\s*for\s*=\s*("(?:\\.|[^"\\])*"|[^;\s]*)/i.exec(element);
    out.push(m ? m[1]!.replace(/^"|"$/g, '') : '');
  }
  return out;
}

/**
 * An address as a header or a socket gives it, without port, brackets or zone, an IPv4-mapped IPv6
 * address as its IPv4 address; null when it is not an IP address.
 */
function plainAddress(text: string): string | null {
  let a = text.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(a);
  if (bracketed) a = bracketed[1]!;
  else if (/^[\d.]+:\d+$/.test(a)) a = a.slice(0, a.lastIndexOf(':'));
  a = a.replace(/%.*$/, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(a);
  if (mapped) a = mapped[1]!;
  return isIPv4(a) || isIPv6(a) ? a : null;
}

/**
 * What a client address is counted under: an IPv4 address alone; an IPv6 address by its /64, the
 * network one site gets, inside which a single host picks any address it likes (counted one by
 * one, each would get a quota of its own). Anything else (`unknown`) as it is.
 */
export function addressCounter(address: string): string {
  if (!isIPv6(address)) return address;
  const [head = '', tail = ''] = address.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  let hextets = [...groups(head), ...groups(tail)];
  // An IPv4 tail (64:ff9b::192.0.2.1) is two hextets; only the first four matter here.
  if (address.includes('::')) {
    const missing = 8 - hextets.length - (hextets.at(-1)?.includes('.') ? 1 : 0);
    hextets = [...groups(head), ...Array(Math.max(0, missing)).fill('0'), ...groups(tail)];
  }
  return `${hextets
    .slice(0, 4)
    .map((h) => Number.parseInt(h, 16).toString(16))
    .join(':')}::/64`;
}
