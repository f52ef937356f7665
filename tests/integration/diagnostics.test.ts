import { auditMark, auditSince, lapsCanaries, signedIn, stack } from '../support/stack';

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
