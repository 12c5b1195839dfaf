/**
 * How far an audit's dates, or `--now`, may run ahead of the clock they are checked against: two
 * machines' clocks disagree by seconds, never by minutes. Anything later is a mistake (a typo'd
 * year, a clock set wrong) that would otherwise be signed as freshness.
 *
 * A module of its own so that the CLI's option checks read it without loading the audit schema
 * and, through it, the domain parser (tldts and whatwg-url) at every command's start.
 */
export const FUTURE_TOLERANCE_MS = 5 * 60 * 1000;
