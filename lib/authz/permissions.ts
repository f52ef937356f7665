// Permission codes of the console spec (delegation actions).
export const PERMISSIONS = [
  'computers.read',
  'computers.laps.read',
  'computers.laps.expire',
  'computers.bitlocker.read',
  'vip.manage',
  'users.read',
  'groups.read',
  'users.password.reset',
  'users.unlock',
  'users.disable',
  'users.enable',
  'users.attributes.write',
  'groups.members.write',
  'users.move',
  'users.rename',
  'users.rename.login',
  'groups.create',
  'groups.attributes.write',
  'groups.delete',
  'groups.owned.members.write',
  'audit.read',
  'settings.manage',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

export const SUPER_ADMINISTRATOR_ROLE = { id: 'super-administrator', name: 'Super administrator', builtIn: true, permissions: [...PERMISSIONS] };
