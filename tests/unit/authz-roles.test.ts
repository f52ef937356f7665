import { isApiError } from '../../lib/errors';
import { PERMISSIONS } from '../../lib/authz/permissions';
import { REQUIRES, validateRole, type AuthzState, type Role } from '../../lib/authz/rights';
import { planImport, validateImportFile } from '../../lib/authz/import-roles';

const code = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    if (isApiError(e)) return { status: e.status, code: e.code, details: e.details };
    throw e;
  }
  return undefined;
};

describe('the role editor rules', () => {
  it('accepts a consistent role and returns its permissions deduplicated in the spec order', () => {
    expect(validateRole({ id: 'desk', name: ' Desk ', permissions: ['computers.laps.read', 'computers.read', 'computers.read'] })).toEqual({
      id: 'desk',
      name: 'Desk',
      permissions: ['computers.read', 'computers.laps.read'],
    });
  });

  it.each([['computers.laps.read'], ['computers.laps.expire']])('refuses %s without computers.read (computers_read_required)', (p) => {
    expect(code(() => validateRole({ id: 'r', name: 'R', permissions: [p, 'vip.manage'] }))).toEqual({
      status: 400,
      code: 'computers_read_required',
      details: { permission: p, requires: 'computers.read' },
    });
  });

  it.each(Object.entries(REQUIRES))('refuses %s without %s, accepts it with', (p, needs) => {
    expect(code(() => validateRole({ id: 'r', name: 'R', permissions: [p] }))?.code).toBe(`${needs!.replace(/\./g, '_')}_required`);
    // users.rename.login needs users.rename, which needs users.read in turn
    const closure = [p, needs!, ...(REQUIRES[needs as keyof typeof REQUIRES] ? [REQUIRES[needs as keyof typeof REQUIRES]!] : [])];
    expect(validateRole({ id: 'r', name: 'R', permissions: closure }).permissions.sort()).toEqual([...new Set(closure)].sort());
  });

  it('refuses unknown permission codes, naming them once', () => {
    expect(code(() => validateRole({ id: 'r', name: 'R', permissions: ['users.read', 'users.fly', 'users.fly', 'Users.Read'] }))).toEqual({
      status: 400,
      code: 'unknown_permission',
      details: { permissions: ['users.fly', 'Users.Read'] },
    });
  });

  it('treats the built-in id as read-only, whatever the body', () => {
    expect(code(() => validateRole({ id: 'super-administrator', name: 'X', permissions: [] }))?.code).toBe('role_read_only');
    expect(code(() => validateRole({ id: 'super-administrator', name: 'X', permissions: [] }))?.status).toBe(403);
  });

  it.each(['Super administrator', 'super ADMINISTRATOR', '  Super administrator  '])('renames a custom role named %j with a (custom) suffix', (name) => {
    expect(validateRole({ id: 'r', name, permissions: [] }).name).toBe(`${name.trim()} (custom)`);
  });
  it('leaves other names alone', () => {
    expect(validateRole({ id: 'r', name: 'Super administrator (custom)', permissions: [] }).name).toBe('Super administrator (custom)');
    expect(validateRole({ id: 'r', name: 'Super administrators', permissions: [] }).name).toBe('Super administrators');
  });

  it.each(['Bad_Id', '', '-x', 'a'.repeat(65), 'a b', 'é'])('refuses the id %j (invalid_id)', (id) => {
    expect(code(() => validateRole({ id, name: 'R', permissions: [] }))?.code).toBe('invalid_id');
  });
  it.each([{ name: '', permissions: [] }, { name: 'x'.repeat(101), permissions: [] }, { name: 'R' }, { name: 'R', permissions: 'users.read' }, null, 42])(
    'refuses a malformed role %j (validation_failed, no value echoed)',
    (r) => {
      const c = code(() => validateRole(r === null || typeof r !== 'object' ? r : { id: 'r', ...r }));
      expect(c?.status).toBe(400);
    },
  );

  it('accepts every permission at once (what the Super administrator holds)', () => {
    expect(validateRole({ id: 'all', name: 'All', permissions: [...PERMISSIONS] }).permissions).toEqual([...PERMISSIONS]);
  });
});

describe('import-roles files', () => {
  const role = (id: string, name: string, permissions: string[] = []) => ({ id, name, permissions });
  const state = (...roles: Array<ReturnType<typeof role>>): AuthzState => ({ revision: 3, roles: new Map(roles.map((r) => [r.id, { data: r as Role, version: 2 }])), delegations: new Map() });
  const plan = (s: AuthzState, roles: unknown[], replace = false) => planImport(s, validateImportFile({ roles }), replace).result.summary;

  it('validates every role on its own: the valid ones, and each refused one by index (id only when well formed)', () => {
    const r = validateImportFile({ roles: [role('a', 'A'), role('b', 'B', ['computers.laps.read']), role('Bad_Id', 'X'), 'x', role('a', 'A2'), role('super-administrator', 'S')] });
    expect(r.valid.map((v) => [v.index, v.role.id])).toEqual([[0, 'a']]);
    expect(r.refused).toEqual([
      { index: 1, id: 'b', code: 'computers_read_required', details: { permission: 'computers.laps.read', requires: 'computers.read' } },
      { index: 2, id: null, code: 'invalid_id', details: { errors: [expect.objectContaining({ field: 'id' })] } },
      { index: 3, id: null, code: 'validation_failed', details: expect.any(Object) },
      { index: 4, id: 'a', code: 'duplicate_role' },
      { index: 5, id: 'super-administrator', code: 'role_read_only', details: { role: 'super-administrator' } },
    ]);
    expect(JSON.stringify(r.refused)).not.toContain('Bad_Id');
  });
  it.each([[null], [[]], [{}], [{ roles: {} }], ['roles']])('refuses a file that is not { roles: [...] }: %j', (f) => {
    expect(code(() => validateImportFile(f))?.code).toBe('invalid_import_file');
  });
  it('never overwrites an existing role without --replace (an identical one is unchanged)', () => {
    const s = state(role('desk', 'Desk', ['users.read']), role('other', 'Other'));
    expect(plan(s, [role('desk', 'Desk', ['groups.read']), role('other', 'Other'), role('new', 'New')])).toEqual({
      created: ['new'],
      updated: [],
      unchanged: ['other'],
      refused: [{ index: 0, id: 'desk', code: 'role_exists' }],
    });
  });
  it('--replace overwrites what the file names and deletes nothing', () => {
    const s = state(role('desk', 'Desk', ['users.read']), role('other', 'Other'));
    const p = planImport(s, validateImportFile({ roles: [role('desk', 'Desk', ['groups.read'])] }), true);
    expect(p.result.summary).toEqual({ created: [], updated: ['desk'], unchanged: [], refused: [] });
    expect(p.writes).toEqual([{ put: 'role', value: role('desk', 'Desk', ['groups.read']), version: 2 }]);
  });
  it('keeps names unique (case-insensitive, after the (custom) rename) against kept and accepted roles; a swap of names with --replace works', () => {
    const s = state(role('desk', 'Desk'), role('ops', 'Ops'));
    expect(plan(s, [role('a', 'DESK'), role('b', 'New'), role('c', 'new')]).refused.map((r) => [r.index, r.code])).toEqual([
      [0, 'role_name_taken'],
      [2, 'role_name_taken'],
    ]);
    expect(plan(s, [role('a', 'Super administrator'), role('b', 'Super administrator (custom)')]).refused.map((r) => r.index)).toEqual([1]);
    expect(plan(s, [role('desk', 'Ops'), role('ops', 'Desk')], true)).toMatchObject({ updated: ['desk', 'ops'], refused: [] });
  });
  it('a refused rename leaves the stored name in place, and a role that took it is refused too', () => {
    // ops is renamed away from 'Ops' but refused (no --replace); 'x' wanted 'Ops'
    const s = state(role('ops', 'Ops'));
    expect(plan(s, [role('x', 'Ops'), role('ops', 'Renamed')])).toMatchObject({ created: [], refused: [{ index: 0, code: 'role_name_taken' }, { index: 1, code: 'role_exists' }] });
  });
});

