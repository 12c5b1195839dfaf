import { describe, expect, it } from 'vitest';
import { InvalidDomainError } from '../../core/errors/errors.ts';
import { displayDomain, MAX_DOMAIN_INPUT, normalizeDomain, unicodeDomain } from '../../core/rules/domain.ts';
import { thrown } from '../support/thrown.ts';

const label63 = 'a'.repeat(63);

describe('normalizeDomain: accepted inputs', () => {
  const cases: [string, string, string][] = [
    // [what, input, expected]
    ['already normal', 'example.com', 'example.com'],
    ['upper case', 'EXAMPLE.COM', 'example.com'],
    ['mixed case', 'Example.CoM', 'example.com'],
    ['https scheme', 'https://example.com', 'example.com'],
    ['http scheme', 'http://example.com', 'example.com'],
    ['upper-case scheme', 'HTTPS://Example.com/', 'example.com'],
    ['other scheme (ftp)', 'ftp://example.com/pub', 'example.com'],
    ['other scheme (wss)', 'wss://example.com/socket', 'example.com'],
    ['port', 'example.com:8080', 'example.com'],
    ['default port with scheme', 'https://example.com:443', 'example.com'],
    ['path', 'example.com/some/path', 'example.com'],
    ['query', 'example.com?q=1&r=2', 'example.com'],
    ['fragment', 'example.com#section', 'example.com'],
    ['everything at once', 'https://Shop.Example.com:443/x?y#z', 'example.com'],
    ['userinfo', 'user:secret@example.com', 'example.com'],
    ['userinfo with scheme', 'https://user:secret@example.com/', 'example.com'],
    ['userinfo that looks like a host', 'http://example.com@evil.example.org', 'example.org'],
    ['one trailing dot', 'example.com.', 'example.com'],
    ['one trailing dot, upper case, with scheme', 'HTTP://EXAMPLE.COM./', 'example.com'],
    ['surrounding spaces', '  example.com  ', 'example.com'],
    ['IDN to A-label', 'bücher.example', 'xn--bcher-kva.example'],
    ['IDN upper case', 'BÜCHER.example', 'xn--bcher-kva.example'],
    ['A-label stays', 'xn--bcher-kva.example', 'xn--bcher-kva.example'],
    ['A-label upper case', 'XN--BCHER-KVA.EXAMPLE', 'xn--bcher-kva.example'],
    ['IDN in a URL', 'https://www.bücher.example/kaufen', 'xn--bcher-kva.example'],
    ['non-Latin IDN', '例え.jp', 'xn--r8jz45g.jp'],
    ['IDN eszett (UTS 46 nontransitional)', 'faß.de', 'xn--fa-hia.de'],
    ['full-width dot and letters', 'ｅｘａｍｐｌｅ。com', 'example.com'],
    ['www subdomain', 'www.example.com', 'example.com'],
    ['deep subdomain', 'a.b.c.d.example.com', 'example.com'],
    ['eTLD+1 under a two-label suffix', 'www.shop.example.co.uk', 'example.co.uk'],
    ['registrable under co.uk stays', 'example.co.uk', 'example.co.uk'],
    ['private suffix: myshopify.com', 'store.myshopify.com', 'store.myshopify.com'],
    ['private suffix: subdomain of a shop', 'www.store.myshopify.com', 'store.myshopify.com'],
    ['private suffix: github.io', 'a.b.github.io', 'b.github.io'],
    ['private suffix: blogspot.com', 'foo.blogspot.com', 'foo.blogspot.com'],
    ['unknown TLD (default rule)', 'acme.example', 'acme.example'],
    ['unknown TLD, subdomain', 'www.acme.example', 'acme.example'],
    ['digits in labels', '123.com', '123.com'],
    ['inner double hyphen', 'ab--cd.com', 'ab--cd.com'],
    ['label of exactly 63', `${label63}.com`, `${label63}.com`],
    ['hostname of exactly 253', `${label63}.${label63}.${label63}.${'b'.repeat(57)}.com`, `${'b'.repeat(57)}.com`],
    ['backslash as path separator (WHATWG)', 'example.com\\path', 'example.com'],
  ];

  it.each(cases)('%s: %j -> %j', (_what, input, expected) => {
    expect(normalizeDomain(input)).toBe(expected);
  });

  it('the 253-character case really is 253 characters', () => {
    expect(`${label63}.${label63}.${label63}.${'b'.repeat(57)}.com`).toHaveLength(253);
  });
});

describe('normalizeDomain: INVALID_DOMAIN', () => {
  const long254 = `${label63}.${label63}.${label63}.${'b'.repeat(58)}.com`;
  const cases: [string, unknown][] = [
    ['empty', ''],
    ['whitespace only', '   \t '],
    ['undefined', undefined],
    ['null', null],
    ['a number', 42],
    ['an array', ['example.com']],
    ['an object', { domain: 'example.com' }],
    ['public suffix co.uk', 'co.uk'],
    ['public suffix with scheme', 'https://co.uk/'],
    ['private public suffix github.io', 'github.io'],
    ['private public suffix myshopify.com', 'myshopify.com'],
    ['TLD com', 'com'],
    ['TLD with trailing dot', 'com.'],
    ['single label localhost', 'localhost'],
    ['single label with scheme', 'http://localhost:3000/'],
    ['IPv4', '127.0.0.1'],
    ['IPv4 in a URL', 'http://192.168.0.1:8080/'],
    ['IPv4 hex shorthand', '0x7f.1'],
    ['IPv4 as one integer', '2130706433'],
    ['IPv4 octal', '0177.0.0.1'],
    ['IPv6 loopback', '[::1]'],
    ['IPv6 in a URL', 'http://[2001:db8::1]:443/'],
    ['underscore in a label', 'my_shop.com'],
    ['label starting with -', '-shop.com'],
    ['label ending with -', 'shop-.com'],
    ['empty label', 'a..com'],
    ['leading dot', '.example.com'],
    ['two trailing dots', 'example.com..'],
    ['label of 64 characters', `${'a'.repeat(64)}.com`],
    ['hostname of 254 characters', long254],
    ['hostname far over 253', `${Array(5).fill(label63).join('.')}.com`],
    ['input over 2048 characters', 'x'.repeat(MAX_DOMAIN_INPUT + 1)],
    ['valid host with a path making the input over 2048', `https://example.com/${'p'.repeat(MAX_DOMAIN_INPUT)}`],
    ['NUL byte', 'exam\u0000ple.com'],
    ['trailing NUL byte', 'example.com\u0000'],
    ['CR/LF inside', 'example.com\r\nSet-Cookie: x=y'],
    ['LF inside', 'exam\nple.com'],
    ['DEL', 'exam\u007fple.com'],
    ['space inside', 'exa mple.com'],
    ['path traversal', '../../etc/passwd'],
    ['absolute path', '/etc/passwd'],
    ['scheme-relative only', '//example.com'],
    ['scheme with no host', 'https://'],
    ['scheme without slashes', 'http:example.com'],
    ['javascript: URL', 'javascript:alert(1)'],
    ['percent-encoded NUL', 'exa%00mple.com'],
    ['percent-encoded junk', '%zz.com'],
    ['percent-encoded slash', 'example.com%2F'],
    ['percent-encoded invalid UTF-8', '%ff%fe.com'],
    ['wildcard label', '*.example.com'],
    ['bad port', 'example.com:99999'],
    ['non-numeric port', 'example.com:http'],
    ['numeric TLD', 'example.123'],
    ['bad punycode', 'xn--a.com'],
    ['empty punycode', 'xn--.com'],
  ];

  it.each(cases)('%s', (_what, input) => {
    const error = thrown(() => normalizeDomain(input));
    expect(error).toBeInstanceOf(InvalidDomainError);
    expect(error).toMatchObject({ code: 'INVALID_DOMAIN' });
  });

  it('the 254-character case really is 254 characters', () => {
    expect(long254).toHaveLength(254);
  });

  // Controls are refused before trimming: a leading or trailing CR/LF is not padding.
  it('trailing CR/LF', () => {
    expect(thrown(() => normalizeDomain('example.com\r\n'))).toMatchObject({ code: 'INVALID_DOMAIN' });
  });

  it('leading LF', () => {
    expect(thrown(() => normalizeDomain('\nexample.com'))).toMatchObject({ code: 'INVALID_DOMAIN' });
  });
});

describe('normalizeDomain: documented surprises (pinned so a change is noticed)', () => {
  it('percent-encoded letters in the host are decoded by WHATWG URL', () => {
    expect(normalizeDomain('%41%42.com')).toBe('ab.com');
  });

  it('a "mailto:" prefix parses as userinfo', () => {
    expect(normalizeDomain('mailto:someone@example.com')).toBe('example.com');
  });

  it('the host is what WHATWG URL says, not what a reader might think', () => {
    expect(normalizeDomain('example.org#@example.com')).toBe('example.org');
  });
});

describe('displayDomain and unicodeDomain: an IDN for people, beside its A-labels', () => {
  it('shows the Unicode form after the A-label form, and leaves other domains alone', () => {
    expect(displayDomain('xn--bcher-kva.example')).toBe('xn--bcher-kva.example (bücher.example)');
    expect(unicodeDomain('xn--bcher-kva.example')).toBe('bücher.example');
    expect(displayDomain(normalizeDomain('Bücher.Example'))).toBe('xn--bcher-kva.example (bücher.example)');
    expect(displayDomain('acme-outdoor.example')).toBe('acme-outdoor.example');
    expect(unicodeDomain('acme-outdoor.example')).toBeNull();
    expect(unicodeDomain(42)).toBeNull();
  });
});
