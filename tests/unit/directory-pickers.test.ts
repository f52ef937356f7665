import { managedOuTree, searchPrincipals } from '../../lib/authz/pickers';
import type { ObjectFacts, SearchRequest } from '../../lib/directory';
import type { ConsoleRuntime } from '../../lib/runtime';

// The delegation editor's pickers (issue 29): the OU tree offers exactly what a scope may name
// (the managed OUs and below, never a Tier 0/1 OU or what is below it), and the principal search
// asks the directory for users and security groups only, with the typed text escaped.

const BASE = 'DC=corp,DC=example,DC=test';
const ou = (dn: string, guid: string): ObjectFacts => ({ dn, guid, objectClasses: ['top', 'organizationalUnit'], attributes: {}, memberOf: [] });

function runtime(entries: (req: SearchRequest) => ObjectFacts[], seen: SearchRequest[] = []) {
  const dir = {
    baseDn: BASE,
    dnOfGuid: async (guid: string) => ({ m1: `OU=Managed,${BASE}`, t1: `OU=Admins,OU=Managed,${BASE}` })[guid],
    search: async (req: SearchRequest) => {
      seen.push(req);
      return { entries: entries(req), incomplete: false };
    },
  };
  return { settings: async () => ({ managedOus: [{ guid: 'm1', dn: `OU=Managed,${BASE}` }], tierOus: [{ guid: 't1', dn: `OU=Admins,OU=Managed,${BASE}` }] }), directory: async () => dir } as unknown as ConsoleRuntime;
}

test('the OU tree: the managed OU and every OU below it in tree order, Tier OUs and what is below them left out', async () => {
  const rt = runtime(() => [
    ou(`OU=Managed,${BASE}`, 'm1'),
    ou(`OU=Users,OU=Managed,${BASE}`, 'u1'),
    ou(`OU=Sales\\, EMEA,OU=Users,OU=Managed,${BASE}`, 's1'),
    ou(`OU=Admins,OU=Managed,${BASE}`, 't1'),
    ou(`OU=Tier0 Servers,OU=Admins,OU=Managed,${BASE}`, 't2'),
    ou(`OU=Workstations,OU=Managed,${BASE}`, 'w1'),
  ]);
  const { ous, truncated } = await managedOuTree(rt);
  expect(truncated).toBe(false);
  expect(ous.map((o) => [o.path, o.depth, o.name])).toEqual([
    ['Managed', 0, 'Managed'],
    ['Managed / Users', 1, 'Users'],
    ['Managed / Users / Sales, EMEA', 2, 'Sales, EMEA'],
    ['Managed / Workstations', 1, 'Workstations'],
  ]);
});

test('the principal search: users and security groups only, the text escaped, nothing asked under 2 characters', async () => {
  const seen: SearchRequest[] = [];
  const rt = runtime(
    () => [
      { dn: `CN=Ben Fox,OU=Staff,${BASE}`, guid: 'g1', objectClasses: ['top', 'person', 'user'], attributes: { sAMAccountName: 'ben.fox', displayName: 'Ben Fox' }, memberOf: [] },
      { dn: `CN=GG-Helpdesk,OU=Groups,OU=Staff,${BASE}`, guid: 'g2', objectClasses: ['top', 'group'], attributes: { sAMAccountName: 'GG-Helpdesk' }, memberOf: [] },
    ],
    seen,
  );
  expect(await searchPrincipals(rt, ' b ')).toEqual({ items: [], truncated: false });
  expect(seen).toEqual([]);
  const r = await searchPrincipals(rt, 'b*)(x');
  expect(seen[0].filter).toContain('(groupType:1.2.840.113556.1.4.803:=2147483648)');
  expect(seen[0].filter).toContain('(sAMAccountName=b\\2a\\29\\28x*)');
  expect(seen[0].base).toBe(BASE);
  expect(r.items).toEqual([
    { kind: 'user', guid: 'g1', name: 'ben.fox', displayName: 'Ben Fox', where: 'Staff' },
    { kind: 'group', guid: 'g2', name: 'GG-Helpdesk', displayName: null, where: 'Staff / Groups' },
  ]);
});
