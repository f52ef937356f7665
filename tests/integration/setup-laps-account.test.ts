import fs from 'node:fs';
import { issueSetupToken } from '../../lib/setup';
import { readSettings } from '../../lib/setup/settings';
import { auditMark, auditSince, newClient, stack, store } from '../support/stack';

// Console spec, Authentication 8: the LAPS account is never the read, write or reset account.
// Setup refuses it (400 laps_account_not_allowed, audited setup.completed denied) and stores
// nothing; setup is closed again afterwards (the instance stays configured as it was).

const d = stack.directory;
const t = d.technicalAccounts;
const input = (over: Record<string, unknown>) => ({
  domain: d.domain,
  dcs: d.dcs.map((x) => ({ name: x.name, url: x.url })),
  caPem: fs.readFileSync(d.caFile, 'utf8'),
  readAccount: { user: t.read.upn, password: t.read.password },
  writeAccount: { user: t.write.upn, password: t.write.password },
  lapsIdentityUpn: t.laps.upn,
  managedOus: d.managedOus,
  tierOus: d.tier0Ous,
  protectedGroups: d.protectedGroups,
  superAdministrator: 'op-super',
  ...over,
});

describe('setup refuses the LAPS account as a technical account', () => {
  afterAll(async () => {
    // close setup again, as a completed setup does
    await store.put({ Item: { pk: 'INSTANCE', sk: 'SETUP', _et: 'Record', data: {}, version: 1 } });
  });

  it.each([
    ['read', { readAccount: { user: t.laps.upn, password: t.laps.password } }],
    ['write', { writeAccount: { user: t.laps.upn, password: t.laps.password } }],
    ['read (given as its DN)', { readAccount: { user: t.laps.dn, password: t.laps.password } }],
  ])('as the %s account: 400 laps_account_not_allowed, audited, nothing stored', async (which, over) => {
    const before = await readSettings(store);
    const token = await issueSetupToken(store);
    const c = newClient();
    await c.antiforgery();
    const mark = await auditMark();
    const r = await c.post('/api/setup', input(over), { 'x-setup-token': token });
    expect([r.status, r.body.code, r.body.account]).toEqual([400, 'laps_account_not_allowed', which.split(' ')[0]]);
    expect((await auditSince(mark)).find((x) => x.event === 'setup.completed')).toMatchObject({ outcome: 'denied', reason: `laps_account_not_allowed:${which.split(' ')[0]}` });
    expect(JSON.stringify(await auditSince(mark))).not.toContain(t.laps.password);
    expect((await readSettings(store))?.version).toBe(before?.version);
  });
});
