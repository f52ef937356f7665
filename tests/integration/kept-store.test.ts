import fs from 'node:fs';
import { listRoles, putRole } from '../../lib/authz/rights';
import { readSettings } from '../../lib/setup/settings';
import { seedConsole } from '../../local/seed-app';
import { audit, stack, store } from '../support/stack';

// `npm start` keeps its store (SQLite files under local/.data/store/dev): the next start finds the
// instance configured and must leave the user's roles, delegations, operators and audit chain as
// they are (issue 26). The start's seeding runs here again against this stack's configured store.
describe('a start on a kept store', () => {
  it('seeds nothing again: setup is not re-run, an edited role stays edited, the audit chain keeps its head', async () => {
    const before = await readSettings(store);
    expect(before).toBeDefined();
    const helpdesk = (await listRoles(store)).find((r) => r.id === 'helpdesk')!;
    await putRole(store, { ...helpdesk, name: 'Helpdesk (edited by the user)' });
    const head = (await audit.extent()).headSeq;
    const masterKey = Buffer.from(fs.readFileSync(stack.masterKeyFile, 'utf8').trim(), 'base64');
    try {
      const accounts = await seedConsole(store, masterKey, stack.consoleUrl, stack.directory);
      // the accounts are listed again, with the same authenticator secrets
      expect(accounts.map((a) => [a.username, a.totpSecret])).toEqual(stack.accounts.map((a) => [a.username, a.totpSecret]));
      expect((await listRoles(store)).find((r) => r.id === 'helpdesk')?.name).toBe('Helpdesk (edited by the user)');
      expect((await readSettings(store))?.settings.configuredAt).toBe(before!.settings.configuredAt);
      // no setup, no change: not one audit row was written by the second seeding
      expect((await audit.extent()).headSeq).toBe(head);
    } finally {
      await putRole(store, helpdesk);
    }
  });
});
