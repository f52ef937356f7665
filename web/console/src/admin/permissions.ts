// Permissions in words, grouped the way administrators think of them (issue 29: roles show the
// names in words, with the code beside them).

export const PERMISSION_GROUPS: Array<{ group: string; permissions: Array<[string, string]> }> = [
  {
    group: 'Computers',
    permissions: [
      ['computers.read', 'See computers'],
      ['computers.laps.read', 'Reveal local administrator passwords (LAPS)'],
      ['computers.laps.expire', 'Expire local administrator passwords (LAPS)'],
      ['computers.bitlocker.read', 'Reveal BitLocker recovery keys'],
      ['vip.manage', 'Act on protected (VIP) accounts and computers'],
    ],
  },
  {
    group: 'Users',
    permissions: [
      ['users.read', 'See users'],
      ['users.password.reset', 'Reset passwords'],
      ['users.unlock', 'Unlock accounts'],
      ['users.disable', 'Disable accounts'],
      ['users.enable', 'Enable accounts'],
      ['users.attributes.write', 'Edit user attributes'],
      ['users.move', 'Move users to another OU'],
      ['users.rename', 'Rename users'],
      ['users.rename.login', 'Change sign-in names'],
    ],
  },
  {
    group: 'Groups',
    permissions: [
      ['groups.read', 'See groups'],
      ['groups.members.write', 'Change group members'],
      ['groups.owned.members.write', 'Change members of the groups they own'],
      ['groups.create', 'Create groups'],
      ['groups.attributes.write', 'Edit group attributes'],
      ['groups.delete', 'Delete groups'],
    ],
  },
  {
    group: 'Console',
    permissions: [
      ['audit.read', 'Read the audit'],
      ['settings.manage', 'Administer the console'],
    ],
  },
];

export const PERMISSIONS = PERMISSION_GROUPS.flatMap((g) => g.permissions.map(([p]) => p));
const WORDS = new Map(PERMISSION_GROUPS.flatMap((g) => g.permissions));
export const permissionWords = (p: string) => WORDS.get(p) ?? p;
