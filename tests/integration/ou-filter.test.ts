import { randomUUID } from 'node:crypto';
import { seedDirectory } from '../../local/seed-app';
import { signedIn, stack } from '../support/stack';

// The `ou` filter of the computer, user and group lists (decision: the `ou` filter): an unknown,
// malformed or out-of-scope OU, or an object that is not an OU, answers exactly like an existing
// OU in scope with nothing in it: 200 with no items. Never a 500, never a hint of existence.
const base = stack.directory.baseDn;
const managed = stack.directory.managedOus.find((o) => o.startsWith('OU=Managed'))!;
const branch = stack.directory.managedOus.find((o) => o.startsWith('OU=Branch'))!;
const EMPTY = { items: [], truncated: false, incomplete: false };
const dir = seedDirectory(stack.directory);

const lists = [
  // an OU in op-helpdesk's scope holding nothing of that kind, and one holding some
  { path: '/api/computers', emptyOu: `OU=Users,${managed}`, fullOu: `OU=Workstations,${managed}`, inFull: 'WS-STD-01' },
  { path: '/api/users', emptyOu: `OU=Workstations,${managed}`, fullOu: `OU=Users,${managed}`, inFull: 'alice' },
  { path: '/api/groups', emptyOu: `OU=Workstations,${managed}`, fullOu: `OU=Groups,${managed}`, inFull: 'GG-Sales' },
];
const names = (body: any) => body.items.map((i: any) => i.name ?? i.username);

afterAll(() => dir.stop());

describe.each(lists)('GET $path?ou=', ({ path, emptyOu, fullOu, inFull }) => {
  const unknownInScope = `OU=Nope-${randomUUID().slice(0, 8)},${managed}`;
  const cases: Array<[string, () => Promise<string> | string]> = [
    ['an existing empty OU in scope', () => emptyOu],
    ['an existing OU out of scope (OU=Branch for op-helpdesk)', () => branch],
    ['an unknown OU spelled inside the scope', () => unknownInScope],
    ['an unknown OU outside the scope', () => `OU=Nope,${base}`],
    ['an unknown GUID', () => randomUUID()],
    ['the GUID of an OU out of scope', async () => (await dir.resolveOu(branch)).guid],
    ['a malformed DN spelled inside the scope ("x,OU=Managed,...")', () => `x,${managed}`],
    ['a malformed DN ("not a dn")', () => 'not a dn'],
    ['a malformed DN (unbalanced escape "OU=a\\")', () => 'OU=a\\'],
    ['a DN in another domain', () => 'OU=Managed,DC=other,DC=test'],
    ['an object in scope that is not an OU (a computer)', () => stack.directory.computers.find((c) => c.name === 'WS-STD-01')!.dn],
    ['the domain root', () => base],
  ];

  it.each(cases)('%s answers 200 with no items, identical to an empty OU', async (_label, ou) => {
    const c = await signedIn('op-helpdesk');
    const r = await c.get(`${path}?ou=${encodeURIComponent(await ou())}`);
    expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: EMPTY });
  });

  it('an OU in scope, by its DN as the directory writes it, respelled (case, spaces) and by GUID, lists the same objects', async () => {
    const c = await signedIn('op-helpdesk');
    const canonical = await c.get(`${path}?ou=${encodeURIComponent(fullOu)}`);
    expect(canonical.status).toBe(200);
    expect(names(canonical.body)).toContain(inFull);
    expect(canonical.body.items.length).toBeGreaterThan(0);
    const respelled = fullOu.toLowerCase().replace(/,/g, ', ');
    const guid = (await dir.resolveOu(fullOu)).guid;
    for (const ou of [respelled, guid, guid.toUpperCase()]) {
      const r = await c.get(`${path}?ou=${encodeURIComponent(ou)}`);
      expect([ou, r.status, r.body]).toEqual([ou, 200, canonical.body]);
    }
  });
});
