import { parse as parseTld } from 'tldts';
import { toUnicode } from 'tr46';
import { URL as PortableURL } from 'whatwg-url';
import { InvalidDomainError } from '../errors/errors.ts';
import { remembered } from '../memo.ts';

/** Longest raw input looked at; anything longer cannot hold a valid URL of a 253-octet host. */
export const MAX_DOMAIN_INPUT = 2048;

const MAX_HOSTNAME = 253;
const MAX_LABEL = 63;
const LABEL = /^[a-z0-9-]+$/;
const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;
// C0 controls (tab, CR, LF, NUL...) and DEL: never part of a host.
const CONTROL = /[\u0000-\u001f\u007f]/;
// What plainHost takes as it is: ASCII host characters only, no A-label, not an IPv4 spelling.
const PLAIN_HOST = /^[a-z0-9.-]+$/i;
const A_LABEL = /(^|\.)xn--/i;
const ENDS_IN_A_NUMBER = /(^|\.)(\d+|0x[0-9a-f]*)\.?$/i;

/**
 * Normalizes what a caller typed into the record key: the registrable domain (eTLD+1) of the
 * host, lowercase A-label form. One function for the gateway, the build, MCP and the CLI.
 *
 * Accepts a bare host, `host:port`, `host/path`, or a full URL; drops scheme, userinfo, port,
 * path, query, fragment and one trailing dot. Throws {@link InvalidDomainError} naming what is
 * wrong for anything that is not a valid registrable hostname.
 *
 * @example normalizeDomain('https://WWW.Shop.Example.co.uk:443/x?y') // 'example.co.uk'
 * @example normalizeDomain('bücher.example') // 'xn--bcher-kva.example'
 */
export function normalizeDomain(input: unknown): string {
  return typeof input === 'string' ? normalizeRemembered(input) : normalize(input);
}

/**
 * Inputs normalized lately: normalization (the suffix list; WHATWG URL for a host that is not
 * plain) is a visible share of a record request (measured: about 6 us of 75).
 */
const normalizeRemembered = remembered(normalize, { entries: 10_000, longestInput: 256 });

/**
 * A normalized domain as people read it: the A-label form the record key is, then its Unicode form
 * beside it when a label is an A-label, so an IDN is recognisable and the key stays the one shown
 * first (a look-alike is told apart by the A-labels). Anything else is returned as it is. Shared by
 * `mvr verify`'s text and the verify page.
 *
 * @example displayDomain('xn--bcher-kva.example') // 'xn--bcher-kva.example (bücher.example)'
 */
export function displayDomain(domain: string): string {
  const unicode = unicodeDomain(domain);
  return unicode === null ? domain : `${domain} (${unicode})`;
}

/**
 * The Unicode form of a normalized domain with an A-label, for JSON beside the domain itself
 * (`domain_unicode`); null when it has none (or its A-labels do not decode).
 */
export function unicodeDomain(domain: unknown): string | null {
  if (typeof domain !== 'string' || !A_LABEL.test(domain)) return null;
  const { domain: unicode, error } = toUnicode(domain);
  return error || unicode === domain ? null : unicode;
}

function normalize(input: unknown): string {
  if (typeof input !== 'string') throw new InvalidDomainError('domain is required and must be a string');
  if (input.length > MAX_DOMAIN_INPUT) {
    throw new InvalidDomainError(`domain is ${input.length} characters long; at most ${MAX_DOMAIN_INPUT} are accepted`);
  }
  // Controls are refused anywhere, before trimming: a trailing CR/LF is an injection attempt, not padding.
  if (CONTROL.test(input)) throw new InvalidDomainError('domain contains control characters');
  const trimmed = input.trim();
  if (trimmed === '') throw new InvalidDomainError('domain is empty');
  if (/\s/.test(trimmed)) throw new InvalidDomainError('domain contains whitespace');
  const host = hostOf(trimmed);
  if (host.startsWith('[')) throw new InvalidDomainError(`"${host}" is an IP address, not a domain`);
  // WHATWG URL has already turned every IPv4 spelling (0x7f.1, 2130706433) into dotted decimal.
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(host)) throw new InvalidDomainError(`"${host}" is an IP address, not a domain`);
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  checkHostname(name);
  const parsed = parseTld(name, { allowPrivateDomains: true, extractHostname: false });
  if (parsed.isIp) throw new InvalidDomainError(`"${name}" is an IP address, not a domain`);
  if (!parsed.domain) throw new InvalidDomainError(`"${name}" is a public suffix, not a registrable domain`);
  return parsed.domain;
}

/**
 * Takes the host out of any accepted form; lowercase and IDNA-converted (UTS #46, non-transitional)
 * by the WHATWG URL parser. It is the whatwg-url package's, pinned with its tr46, not the
 * runtime's own: Node releases differ on which A-labels they accept (`xn--a.com` is refused by
 * Node 20 and accepted by 24 and 26), and a build and a gateway on two Node lines must agree on
 * which domains exist.
 */
function hostOf(value: string): string {
  // Only the authority is wanted, so any scheme is replaced by http, whose host parsing lowercases and applies IDNA.
  const rest = SCHEME.test(value) ? value.replace(SCHEME, '') : value;
  if (rest.startsWith('/') || rest.startsWith('\\')) throw new InvalidDomainError('domain has no host');
  const plain = plainHost(rest);
  if (plain !== null) return plain;
  let url: PortableURL;
  try {
    url = new PortableURL(`http://${rest}`);
  } catch {
    throw new InvalidDomainError(`"${truncate(value)}" is not a valid hostname or URL`);
  }
  if (url.hostname === '') throw new InvalidDomainError('domain has no host');
  return url.hostname;
}

/**
 * The host the WHATWG parser would give for `rest`, without running it, when that is plain
 * lowercasing: ASCII letters, digits, hyphens and dots only (nothing to percent-decode, map or
 * split off), no label an A-label (`xn--`, which IDNA decodes and checks), and not "ending in a
 * number" as the URL standard says (a last label of digits or `0x` hex: an IPv4 spelling).
 * Otherwise null, and the parser decides. Nearly every audited domain is plain, and the parser
 * takes about 30 us a host; test/core/domain-properties.test.ts checks the two agree.
 */
export function plainHost(rest: string): string | null {
  if (!PLAIN_HOST.test(rest) || A_LABEL.test(rest) || ENDS_IN_A_NUMBER.test(rest)) return null;
  return rest.toLowerCase();
}

/** RFC 1035 / 5890 shape rules on the A-label form. */
function checkHostname(name: string): void {
  if (name.length > MAX_HOSTNAME) {
    throw new InvalidDomainError(`hostname is ${name.length} characters long; at most ${MAX_HOSTNAME} are allowed`);
  }
  const labels = name.split('.');
  if (labels.length < 2) throw new InvalidDomainError(`"${name}" is a single label; a domain needs at least two`);
  for (const label of labels) {
    if (label === '') throw new InvalidDomainError(`"${truncate(name)}" has an empty label`);
    if (label.length > MAX_LABEL) {
      throw new InvalidDomainError(`label "${truncate(label)}" is ${label.length} characters long; at most ${MAX_LABEL} are allowed`);
    }
    if (!LABEL.test(label)) throw new InvalidDomainError(`label "${truncate(label)}" has characters other than a-z 0-9 -`);
    if (label.startsWith('-') || label.endsWith('-')) {
      throw new InvalidDomainError(`label "${label}" starts or ends with "-"`);
    }
  }
}

function truncate(s: string): string {
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}
