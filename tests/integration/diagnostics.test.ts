import { changeAuthz, listDelegations, putDelegation, putRole } from '../../lib/authz/rights';
import type { InstanceSettings } from '../../lib/setup/settings';
import { getRecord, putRecord } from '../../lib/store/records';
import { resetAuthenticator } from '../../lib/auth/operators';
import { seedDirectory } from '../../local/seed-app';
import { consoleEnvironment } from '../../functions/admin/cli';
import { runDiagnostics } from '../../lib/diagnostics';
import { createRuntime } from '../../lib/runtime';
import { auditMark, auditSince, lapsCanaries, seedUser, signedIn, stack, store } from '../support/stack';

describe('LAPS diagnostics', () => {
  it('reports the schema, the LAPS identity and its rights on one sample per scope, computed against the directory', async () => {
    const c = await signedIn('op-super');
    const r = await c.get('/api/diagnostics/laps');
    expect(r.status).toBe(200);
    expect(r.body.checks).toEqual(expect.arrayContaining(['laps_schema_windows', 'laps_identity_ok']));
    expect(r.body.checks).not.toContain('laps_identity_upn_missing');
    const byScope = Object.fromEntries(r.body.scopes.map((s: any) => [s.scope.split(',')[0], s]));
    // OU=Branch: WS-BR-01, where the LAPS account holds read and expire rights
    expect(byScope['OU=Branch']).toMatchObject({ sample: 'WS-BR-01', checks: ['laps_read_rights_effective', 'laps_expire_rights_present'] });
    // OU=Managed: the first sample by name is SRV-NORIGHTS-01, where the LAPS account has neither
    expect(byScope['OU=Managed']).toMatchObject({ sample: 'SRV-NORIGHTS-01', checks: ['laps_read_rights_missing', 'laps_expire_rights_missing'] });
    for (const canary of lapsCanaries()) expect(r.text).not.toContain(canary);
    expect(stack.directory.managedOus.length).toBe(2);
  });

  it('is refused without settings.manage (403, audited)', async () => {
    const c = await signedIn('op-helpdesk');
    const mark = await auditMark();
    const r = await c.get('/api/diagnostics/laps');
    expect(r.status).toBe(403);
    expect((await auditSince(mark)).find((x) => x.event === 'authz.decision')).toMatchObject({ outcome: 'denied', details: { permission: 'settings.manage' } });
  });
});

describe('diagnostics, complete (GET /api/diagnostics)', () => {
  const settingsNow = async () => (await getRecord<InstanceSettings>(store, 'INSTANCE', 'SETTINGS'))!;
  /** Run `fn` with the settings item changed by `change`, then put it back as it was. */
  async function withSettings(change: (s: InstanceSettings) => InstanceSettings, fn: () => Promise<void>) {
    const before = await settingsNow();
    expect(await putRecord(store, 'INSTANCE', 'SETTINGS', change(before.data), { expectVersion: before.version })).toBe(true);
    try {
      await fn();
    } finally {
      const now = await settingsNow();
      await putRecord(store, 'INSTANCE', 'SETTINGS', before.data, { expectVersion: now.version });
    }
  }
  const codes = (r: { body: any }) => r.body.checks.map((c: any) => c.code);
  const find = (r: { body: any }, code: string) => r.body.checks.find((c: any) => c.code === code);

  it('reports every check with a code, a severity and a remedy, computed now', async () => {
    const c = await signedIn('op-super');
    // op-enrol may have enrolled in an earlier test of this run (auth.test.ts): start from no authenticator
    await resetAuthenticator(store, seedUser('op-enrol').guid);
    const r = await c.get('/api/diagnostics');
    expect(r.status).toBe(200);
    for (const check of [...r.body.checks, ...r.body.lapsScopes.flatMap((s: any) => s.checks)]) {
      expect(check).toEqual(expect.objectContaining({ code: expect.any(String), section: expect.any(String), severity: expect.stringMatching(/^(ok|info|warning|error)$/), remedy: expect.stringMatching(/\w{3,}/) }));
    }
    // both DCs answer: handshake with the configured CA, read-account bind
    expect(r.body.checks.filter((x: any) => x.code === 'dc_ok').map((x: any) => x.details.dc)).toEqual(['dc1', 'dc2']);
    expect(codes(r)).not.toContain('dc_fewer_than_two');
    expect(codes(r)).not.toContain('trust_not_pinned');
    // op-enrol holds the helpdesk role (delegation helpdesk-managed) and has no authenticator yet
    expect(find(r, 'signin_enrolment_pending')).toMatchObject({ severity: 'warning', details: { count: expect.any(Number), operators: expect.arrayContaining(['op-enrol']) } });
    expect(find(r, 'signin_enrolment_pending').details.operators).not.toContain('op-helpdesk');
    expect(codes(r)).toEqual(expect.arrayContaining(['laps_schema_windows', 'laps_identity_ok']));
    expect(r.body.lapsScopes.find((s: any) => s.scope.startsWith('OU=Branch')).checks.map((x: any) => x.code)).toEqual(['laps_read_rights_effective', 'laps_expire_rights_present']);
    expect(r.body.summary).toEqual({ errors: expect.any(Number), warnings: expect.any(Number) });
    for (const canary of lapsCanaries()) expect(r.text).not.toContain(canary);
    for (const a of Object.values(stack.directory.technicalAccounts)) expect(r.text).not.toContain(a.password);
  });

  it('warns with fewer than two DCs and names a DC that does not answer', async () => {
    const c = await signedIn('op-super');
    const [dc1] = stack.directory.dcs.map((d) => ({ name: d.name, url: d.url }));
    await withSettings(
      (s) => ({ ...s, dcs: [dc1] }),
      async () => {
        const r = await c.get('/api/diagnostics');
        expect(find(r, 'dc_fewer_than_two')).toMatchObject({ severity: 'warning', details: { count: 1 } });
      },
    );
    await withSettings(
      (s) => ({ ...s, dcs: [...s.dcs, { name: 'dc9', url: 'ldaps://127.0.0.9:636' }] }),
      async () => {
        const r = await c.get('/api/diagnostics');
        expect(find(r, 'dc_unreachable')).toMatchObject({ severity: 'warning', details: { dc: 'dc9', problem: 'unreachable' } });
      },
    );
  });

  it('warns about the step-up modes password and none', async () => {
    const c = await signedIn('op-super');
    for (const [mode, code] of [
      ['password', 'signin_password_only'],
      ['none', 'step_up_disabled'],
    ] as const) {
      await withSettings(
        (s) => ({ ...s, stepUpMode: mode }),
        async () => {
          const r = await c.get('/api/diagnostics');
          expect(find(r, code)).toMatchObject({ section: 'signin', severity: 'warning' });
          expect(codes(r)).not.toContain('signin_enrolment_pending');
        },
      );
    }
  });

  it('warns when a platform claim reaches a Super administrator or a protected account (issue 25 #8); the role-mapping setting silences the first', async () => {
    const c = await signedIn('op-super');
    const r = await c.get('/api/diagnostics');
    // the stack signs in through the access platform (JWKS set), AdAccountClaims by default
    expect(find(r, 'access_claim_reaches_super_administrator')).toMatchObject({ section: 'signin', severity: 'warning', details: { accounts: ['op-super'], claims: 'username,trait:windows_logins' } });
    expect(codes(r)).not.toContain('access_claim_reaches_protected_account');
    // a protected account (adminCount=1) holding a console role
    const adam = seedUser('admin-adam');
    await withSettings(
      (s) => ({ ...s, superAdministrators: [...s.superAdministrators, adam.guid] }),
      async () => {
        const w = await c.get('/api/diagnostics');
        expect(find(w, 'access_claim_reaches_protected_account')).toMatchObject({ severity: 'warning', details: { accounts: ['admin-adam'] } });
        expect(find(w, 'access_claim_reaches_super_administrator').details.accounts).toEqual(['admin-adam', 'op-super']);
      },
    );
    // Authentication:Access:SuperAdministratorsRequireRoleMapping=true: no Super administrator warning
    const rt = createRuntime({ env: { ...process.env, ...consoleEnvironment(stack), HDC_Authentication__Access__SuperAdministratorsRequireRoleMapping: 'true', Helpdesk__Enabled: 'true', NODE_EXTRA_CA_CERTS: stack.directory.caFile }, store });
    const on = await runDiagnostics(rt);
    expect(on.checks.map((x) => x.code)).not.toContain('access_claim_reaches_super_administrator');
    expect(on.checks.map((x) => x.code)).toContain('dc_ok');
  });

  it("reports the delegation export out of date exactly when the export's own status says the directory lacks a right", async () => {
    const c = await signedIn('op-super');
    const agree = async () => {
      const [d, e] = await Promise.all([c.get('/api/diagnostics'), c.get('/api/admin/delegation-export')]);
      const missing = e.body.exports.flatMap((x: any) => x.status?.missing ?? []);
      const verdict = d.body.checks.find((x: any) => x.section === 'delegation');
      expect(verdict).toMatchObject(missing.length ? { code: 'delegation_export_out_of_date', severity: 'warning', details: { missingCount: missing.length } } : { code: 'delegation_export_current', severity: 'ok' });
      return verdict;
    };
    await agree();
    // a delegation that needs a right nobody exported: LAPS reads on OU=NoLapsRights, where the
    // local directory gives the LAPS account Read property without Control access (local/directory/dc.sh
    // grants the write account every right of the write model on the managed OUs)
    const branch = (await listDelegations(store)).find((d) => d.id === 'helpdesk-branch')!;
    const dir = seedDirectory(stack.directory);
    let noLapsRights: { dn: string; guid: string };
    try {
      noLapsRights = await dir.resolveOu(`OU=NoLapsRights,OU=Managed,${stack.directory.baseDn}`);
    } finally {
      dir.stop();
    }
    await putRole(store, { id: 'diag-group-creator', name: 'Diagnostics LAPS reader', permissions: ['computers.read', 'computers.laps.read'] });
    await putDelegation(store, { id: 'diag-group-creator', roleId: 'diag-group-creator', scope: [noLapsRights], assignees: branch.assignees });
    try {
      const verdict = await agree();
      expect(verdict.code).toBe('delegation_export_out_of_date');
      expect(verdict.details.missing).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'laps', ou: noLapsRights.dn, ace: expect.stringContaining(';RPCR;msLAPS-Password;computer;') })]));
      expect(verdict.remedy).toContain('Export the delegation script again');
    } finally {
      await changeAuthz(store, () => ({ writes: [{ delete: 'delegation', id: 'diag-group-creator' }, { delete: 'role', id: 'diag-group-creator' }], result: undefined }));
    }
  });

  it('is refused without settings.manage (403, audited)', async () => {
    const c = await signedIn('op-helpdesk');
    const mark = await auditMark();
    expect((await c.get('/api/diagnostics')).status).toBe(403);
    expect((await auditSince(mark)).find((x) => x.event === 'authz.decision')).toMatchObject({ outcome: 'denied', details: { permission: 'settings.manage' } });
  });
});
