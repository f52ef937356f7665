import fc from 'fast-check';
import { EqualityFilter, FilterParser, SubstringFilter, ExtensibleFilter } from 'ldapts';
import { isBelow } from '../../../lib/authz/classify';
import { escapeFilterValue } from '../../../lib/directory';

// LDAP values that come from the outside (a search text, a sign-in name, a DN read back from the
// directory): an escaped value is always read back by the LDAP library as exactly that value, never
// as filter syntax; and a DN is below an OU only when its parent chain really ends there.

/** RFC 4514 escaping of an attribute value inside an RDN (how the directory writes a DN). */
const escapeRdnValue = (v: string) =>
  v
    .replace(/[\\,+"<>;=]/g, (c) => `\\${c}`)
    .replace(/^[ #]/, (c) => `\\${c}`)
    .replace(/ $/, '\\ ')
    .replace(/\0/g, '\\00');

const text = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.constantFrom('*', '*)(cn=*', ')(|(objectClass=*', '\\', '\\2a', '\u0000', 'a)(b', '(', ')', 'x\\', 'é*ü'));

describe('fuzz: LDAP filter values', () => {
  it('an escaped value is the equality value, whatever it holds', () => {
    fc.assert(
      fc.property(text, (v) => {
        const f = FilterParser.parseString(`(cn=${escapeFilterValue(v)})`);
        return f instanceof EqualityFilter && f.attribute === 'cn' && f.value === v;
      }),
      { numRuns: 1000 },
    );
  });

  it('an escaped search text is one substring, never a wildcard or another clause', () => {
    fc.assert(
      fc.property(text.filter((v) => v.length > 0), (v) => {
        const f = FilterParser.parseString(`(|(cn=*${escapeFilterValue(v)}*)(sAMAccountName=*${escapeFilterValue(v)}*))`);
        const parts = (f as unknown as { filters: SubstringFilter[] }).filters;
        return parts.length === 2 && parts.every((p) => p instanceof SubstringFilter && p.initial === '' && p.final === '' && p.any.length === 1 && p.any[0] === v);
      }),
      { numRuns: 1000 },
    );
  });

  it('an escaped DN in an in-chain match is that DN', () => {
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 4 }), (names) => {
        const dn = names.map((n) => `CN=${escapeRdnValue(n)}`).join(',') + ',DC=corp,DC=example,DC=test';
        const f = FilterParser.parseString(`(&(objectClass=group)(member:1.2.840.113556.1.4.1941:=${escapeFilterValue(dn)}))`);
        const inChain = (f as unknown as { filters: unknown[] }).filters[1] as ExtensibleFilter;
        return inChain instanceof ExtensibleFilter && inChain.value === dn;
      }),
      { numRuns: 500 },
    );
  });
});

describe('fuzz: DN containment (scope and tier checks)', () => {
  const BASE = 'DC=corp,DC=example,DC=test';
  const ou = fc.array(fc.oneof(fc.string({ minLength: 1, maxLength: 12 }), fc.constantFrom('Managed', 'Tier0', 'a,b', 'x\\')), { minLength: 1, maxLength: 3 }).map((names) => names.map((n) => `OU=${escapeRdnValue(n)}`).join(',') + `,${BASE}`);

  it('an object is below the OU it was created in, at any depth', () => {
    fc.assert(
      fc.property(ou, fc.array(text.filter((t) => t.length > 0), { minLength: 1, maxLength: 3 }), (parent, names) => isBelow(names.map((n) => `CN=${escapeRdnValue(n)}`).join(',') + `,${parent}`, parent)),
      { numRuns: 500 },
    );
  });

  it('a name that spells an OU never puts an object below it', () => {
    // regression: `CN=x\,OU=Managed,DC=...` (an object at the root named "x,OU=Managed") ended with ",OU=Managed,DC=..."
    fc.assert(
      fc.property(ou, text, (managed, prefix) => {
        const [rdn, ...rest] = managed.split(/(?<!\\),/);
        const parentOfManaged = rest.join(',');
        const spoof = `CN=${escapeRdnValue(`${prefix},${rdn}`)},${parentOfManaged}`;
        return !isBelow(spoof, managed);
      }),
      { numRuns: 500 },
    );
    expect(isBelow('CN=x\\,OU=Managed,DC=corp,DC=example,DC=test', 'OU=Managed,DC=corp,DC=example,DC=test')).toBe(false);
    expect(isBelow('CN=x\\\\,OU=Managed,DC=corp,DC=example,DC=test', 'OU=Managed,DC=corp,DC=example,DC=test')).toBe(true); // an escaped backslash, then a real comma
  });
});
