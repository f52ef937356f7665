import { z } from 'zod';

// What a console reports when polled is only as trustworthy as the console (or whoever answers at
// its URL). Each text it reports is checked against a strict pattern as it is read; a value that
// fails is kept as the word `unparseable`, never passed on verbatim into packs, screens or alerts
// (docs/decisions.md, "Values a console reports", issue 25). The same check runs again when a
// stored poll state is read, so states written before it existed are held to it too.

/** What a reported text that fails its pattern becomes. It passes every pattern below except the DC URL's (there it is the same word again). */
export const UNPARSEABLE = 'unparseable';

/** A version or build tag: the image tag grammar plus `+` (semantic versioning's build metadata). */
export const REPORTED_VERSION = /^[A-Za-z0-9_][A-Za-z0-9_.+-]{0,127}$/;
/** A state word (health, chain, DC state): letters, digits, `_` and `-`. */
export const REPORTED_WORD = /^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/;
/** A problem code of the audit chain check. */
export const REPORTED_PROBLEM = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$/;
/** A DC's display name: letters, digits, the plain space and `. _ - ( ) , : / # @ +`, at most 64. */
export const REPORTED_NAME = /^[\p{L}\p{N}][\p{L}\p{M}\p{N} ._(),:/#@+-]{0,63}$/u;
/** A DC's LDAP URL: ldap(s)://host[:port][/], the host a DNS name, IPv4 or a bracketed IPv6 address. */
export const REPORTED_DC_URL = /^ldaps?:\/\/(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?\/?$/;

/** The value when it matches, else `unparseable`; undefined and null stay as they are. */
export function reportedText(pattern: RegExp, value: string): string;
export function reportedText(pattern: RegExp, value: string | null | undefined): string | null | undefined;
export function reportedText(pattern: RegExp, value: string | null | undefined): string | null | undefined {
  if (value === undefined || value === null) return value;
  return pattern.test(value) ? value : UNPARSEABLE;
}

/** A zod string that becomes `unparseable` when it does not match (a wrong type still fails the parse). */
export const reported = (pattern: RegExp) => z.string().transform((v) => reportedText(pattern, v));
