import { guidBytes, guidEqualityFilter, guidFromBuffer } from '../../lib/directory/guid';
import { isApiError } from '../../lib/errors';
import { PERMISSIONS } from '../../lib/authz/permissions';
import { REQUIRES, validateRole } from '../../lib/authz/rights';
import { validateImportFile } from '../../lib/authz/import-roles';

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
  it('validates every role and names the failing one by index and id', () => {
    const c = code(() => validateImportFile({ roles: [{ id: 'a', name: 'A', permissions: [] }, { id: 'b', name: 'B', permissions: ['computers.laps.read'] }] }));
    expect(c).toEqual({ status: 400, code: 'computers_read_required', details: { permission: 'computers.laps.read', requires: 'computers.read', index: 1, role: 'b' } });
  });
  it.each([[null], [[]], [{}], [{ roles: {} }], ['roles']])('refuses a file that is not { roles: [...] }: %j', (f) => {
    expect(code(() => validateImportFile(f))?.code).toBe('invalid_import_file');
  });
  it('refuses duplicate ids and duplicate names (case-insensitive, after the (custom) rename)', () => {
    expect(code(() => validateImportFile({ roles: [{ id: 'a', name: 'A', permissions: [] }, { id: 'a', name: 'B', permissions: [] }] }))?.code).toBe('duplicate_role');
    expect(code(() => validateImportFile({ roles: [{ id: 'a', name: 'Desk', permissions: [] }, { id: 'b', name: 'desk', permissions: [] }] }))).toMatchObject({ status: 409, code: 'role_name_taken' });
    expect(
      code(() => validateImportFile({ roles: [{ id: 'a', name: 'Super administrator', permissions: [] }, { id: 'b', name: 'Super administrator (custom)', permissions: [] }] }))?.code,
    ).toBe('role_name_taken');
  });
  it('refuses the built-in role in a file', () => {
    expect(code(() => validateImportFile({ roles: [{ id: 'super-administrator', name: 'S', permissions: [] }] }))).toMatchObject({ status: 403, code: 'role_read_only', details: { index: 0 } });
  });
});

describe('objectGUID filters', () => {
  it('carry the 16 raw bytes (never UTF-8 re-encoded), in the directory byte order', () => {
    const guid = 'd19adb6d-3c3b-49d3-917b-d623729f3672';
    const f = guidEqualityFilter(guid) as unknown as { attribute: string; value: Buffer };
    expect(f.attribute).toBe('objectGUID');
    expect(Buffer.isBuffer(f.value) && f.value.length).toBe(16);
    expect(f.value.toString('hex')).toBe(guidBytes(guid).toString('hex'));
    expect(guidFromBuffer(f.value)).toBe(guid);
    expect(() => guidEqualityFilter('not-a-guid')).toThrow();
  });
});
