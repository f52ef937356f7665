// seed.mjs : the seed data of the local test directory (docs/local-directory.md) and seed.json.
//   node seed.mjs provision    on dc1, as Administrator over LDAPS: password policy, OUs, groups,
//                              users, computers, LAPS values, memberships, lockout of dave
//                              (idempotent where cheap: existing entries and memberships are kept)
//   node seed.mjs describe     read every seeded object back from the directory (DN, objectGUID,
//                              objectSid, memberships, state) and write local/.data/directory/seed.json
//   node seed.mjs replication  a change written on each DC must become visible on the other
//   node seed.mjs bitlocker-account   the BitLocker account (idempotent)
//   node seed.mjs bitlocker    the BitLocker recovery objects, after their rights (dc.sh
//                              ensure_bitlocker; an existing directory gains them at the next ensure)
// Run by dc.sh, which sets HDC_DIRECTORY_ADMIN_PASSWORD. The technical accounts' rights are set by
// dc.sh (samba-tool dsacl), after 'provision'.
import { Attribute, Change } from 'ldapts';
import crypto from 'node:crypto';
import fs from 'node:fs';
import {
  ADMIN_UPN, BASE, CA_FILE, DCS, DISCOVERY, DOMAIN, NETBIOS, SEED_FILE, adminPassword, checkReplication, connect,
  errorOf, fileTime, guidToString, rdnValue, sidToString, value, values,
} from './common.mjs';

// ---------------------------------------------------------------------------------------------
// The seed
// ---------------------------------------------------------------------------------------------
const ou = (...names) => [...names.map((n) => `OU=${n}`), BASE].join(',');
const OU = {
  managed: ou('Managed'),
  workstations: ou('Workstations', 'Managed'),
  servers: ou('Servers', 'Managed'),
  tier0: ou('Tier0', 'Servers', 'Managed'),
  users: ou('Users', 'Managed'),
  groups: ou('Groups', 'Managed'),
  noLapsRights: ou('NoLapsRights', 'Managed'),
  branch: ou('Branch'),
  branchWorkstations: ou('Workstations', 'Branch'),
  branchUsers: ou('Users', 'Branch'),
  unmanaged: ou('Unmanaged'),
  staff: ou('Staff'),
  serviceAccounts: ou('Service Accounts'),
};
// [dn, kind, description] in creation order (parents first)
const OUS = [
  [OU.managed, 'managed', 'Managed OU 1 (root of a delegation scope)'],
  [OU.workstations, 'managed', 'Workstations of OU=Managed'],
  [OU.servers, 'managed', 'Servers of OU=Managed'],
  [OU.tier0, 'tier0', 'Tier 0 servers: never manageable'],
  [OU.users, 'managed', 'Users of OU=Managed'],
  [OU.groups, 'managed', 'Groups of OU=Managed'],
  [OU.noLapsRights, 'managed', 'Inheritance blocked: svc-laps has Read Property without Control Access here'],
  [OU.branch, 'managed', 'Managed OU 2 (a second, separate delegation scope)'],
  [OU.branchWorkstations, 'managed', 'Workstations of OU=Branch'],
  [OU.branchUsers, 'managed', 'Users of OU=Branch'],
  [OU.unmanaged, 'unmanaged', 'Outside every managed OU'],
  [OU.staff, 'unmanaged', 'Operators of the console (not managed by it)'],
  [OU.serviceAccounts, 'unmanaged', 'Technical accounts of hdc'],
];

// Builtin groups the seed uses as sensitive groups (not the console's full list)
const BUILTIN = {
  'Domain Admins': `CN=Domain Admins,CN=Users,${BASE}`,
  'Server Operators': `CN=Server Operators,CN=Builtin,${BASE}`,
};

const GROUPS = [
  { name: 'GG-VIP', ou: OU.groups, note: 'the protected (VIP) group' },
  { name: 'GG-Helpdesk-Tier1', ou: OU.groups, memberOf: ['GG-Helpdesk'], note: 'helpdesk tier 1; member of GG-Helpdesk' },
  { name: 'GG-Helpdesk', ou: OU.groups, note: 'all helpdesk; contains GG-Helpdesk-Tier1 (nested)' },
  { name: 'GG-Sales', ou: OU.groups, note: 'a plain group with users' },
  { name: 'GG-Nested-Sensitive', ou: OU.groups, memberOf: ['Server Operators'], note: 'member of the builtin Server Operators: its members are sensitive through nesting' },
  { name: 'GG-Approvers', ou: OU.staff, note: 'console approvers (operators)' },
];

const person = (username, givenName, sn, password, ouDn, kind, note, extra = {}) =>
  ({ username, givenName, sn, password, ou: ouDn, kind, note, ...extra });
const USERS = [
  person('alice', 'Alice', 'Anders', 'Target-Pw!1001', OU.users, 'target', 'plain enabled user'),
  person('bob', 'Bob', 'Berg', 'Target-Pw!1002', OU.users, 'target', 'member of GG-Sales', { memberOf: ['GG-Sales'] }),
  person('carol', 'Carol', 'Castro', 'Target-Pw!1003', OU.users, 'target', 'disabled (userAccountControl 514); member of GG-Sales', { disabled: true, memberOf: ['GG-Sales'] }),
  person('dave', 'Dave', 'Dunn', 'Target-Pw!1004', OU.users, 'target', 'locked out: lockoutTime set by real failed binds (a password settings object gives only dave a lockout threshold of 3, duration forever)', { lockOut: true }),
  person('vip-victor', 'Victor', 'Vance', 'Target-Pw!1005', OU.users, 'target', 'protected (VIP): member of GG-VIP', { memberOf: ['GG-VIP'] }),
  person('admin-adam', 'Adam', 'Archer', 'Target-Pw!1006', OU.users, 'target', 'adminCount=1', { adminCount: 1 }),
  person('da-dana', 'Dana', 'Dalton', 'Target-Pw!1007', OU.users, 'target', 'member of Domain Admins (adminCount not set: Samba runs no SDProp)', { memberOf: ['Domain Admins'] }),
  person('branch-bea', 'Bea', 'Brandt', 'Target-Pw!1008', OU.branchUsers, 'target', 'user of the second managed OU (OU=Branch)'),
  person('op-super', 'Olga', 'Sommer', 'Operator-Pw!2001', OU.staff, 'operator', 'to be assigned the Super administrator role'),
  person('op-helpdesk', 'Oscar', 'Hill', 'Operator-Pw!2002', OU.staff, 'operator', 'member of GG-Helpdesk-Tier1, hence nested in GG-Helpdesk', { memberOf: ['GG-Helpdesk-Tier1'] }),
  person('op-approver', 'Otto', 'Pruett', 'Operator-Pw!2003', OU.staff, 'operator', 'member of GG-Approvers', { memberOf: ['GG-Approvers'] }),
  person('op-approver2', 'Olivia', 'Prentice', 'Operator-Pw!2004', OU.staff, 'operator', 'member of GG-Approvers (second approver)', { memberOf: ['GG-Approvers'] }),
  person('op-auditor', 'Omar', 'Quinn', 'Operator-Pw!2005', OU.staff, 'operator', 'auditor'),
  person('op-branch', 'Ophelia', 'Banks', 'Operator-Pw!2006', OU.staff, 'operator', 'delegated on OU=Branch only'),
  person('op-norole', 'Owen', 'Nash', 'Operator-Pw!2007', OU.staff, 'operator', 'holds no role'),
  person('op-enrol', 'Opal', 'Ellis', 'Operator-Pw!2008', OU.staff, 'operator', 'has a role but no authenticator yet (enrolment)'),
];

const TECHNICAL = [
  { key: 'read', username: 'svc-hdc-read', password: 'Service-Pw!3001', note: 'read account: a plain user (reads as Authenticated Users)' },
  { key: 'write', username: 'svc-hdc-write', password: 'Service-Pw!3002', note: 'write account: WP on group member and on user description, displayName, givenName, sn, mail, telephoneNumber, userAccountControl, lockoutTime in OU=Managed and OU=Branch (inherited)' },
  { key: 'reset', username: 'svc-hdc-reset', password: 'Service-Pw!3003', note: 'password-reset account: Reset Password extended right and WP on lockoutTime, pwdLastSet of users in OU=Managed and OU=Branch (inherited)' },
  { key: 'laps', username: 'svc-laps', password: 'Service-Pw!3004', note: 'LAPS account: a plain user in no admin group; RP+CR on msLAPS-Password and ms-Mcs-AdmPwd, WP on both expiration times, on computers in OU=Managed and OU=Branch; only RP in OU=NoLapsRights; nothing on msLAPS-EncryptedPassword' },
  { key: 'bitlocker', username: 'svc-bitlocker', password: 'Service-Pw!3005', note: 'BitLocker account: a plain user in no admin group; read + Control Access on msFVE-RecoveryPassword of msFVE-RecoveryInformation objects in OU=Managed and OU=Branch (not OU=NoLapsRights, whose DACL is protected); the only account that reads a recovery password' },
];

const UAC = { ACCOUNTDISABLE: 0x2, NORMAL_ACCOUNT: 0x200, WORKSTATION_TRUST_ACCOUNT: 0x1000, SERVER_TRUST_ACCOUNT: 0x2000, DONT_EXPIRE_PASSWORD: 0x10000, TRUSTED_FOR_DELEGATION: 0x80000, TRUSTED_TO_AUTH_FOR_DELEGATION: 0x1000000, PARTIAL_SECRETS_ACCOUNT: 0x4000000 };
const WKS = UAC.WORKSTATION_TRUST_ACCOUNT;
const pc = (name, ouDn, cls, laps, note, extra = {}) => ({ name, ou: ouDn, class: cls, laps, note, uac: WKS, ...extra });
const WIN11 = 'Windows 11 Enterprise', SRV22 = 'Windows Server 2022 Datacenter';
const COMPUTERS = [
  pc('WS-STD-01', OU.workstations, 'standard', 'windows', 'standard; Windows LAPS password with non-ASCII and JSON-special characters'),
  pc('WS-STD-02', OU.workstations, 'standard', 'legacy', 'standard; legacy LAPS only (ms-Mcs-AdmPwd)', { os: 'Windows 10 Enterprise' }),
  pc('WS-STD-03', OU.workstations, 'standard', 'encrypted', 'standard; only msLAPS-EncryptedPassword (a fake blob, never readable by svc-laps)'),
  pc('WS-STD-04', OU.workstations, 'standard', 'none', 'standard; no LAPS attribute at all'),
  pc('WS-STD-05', OU.workstations, 'standard', 'windows', 'standard; Windows and legacy LAPS both present (windows wins)', { legacyToo: true }),
  pc('WS-BR-01', OU.branchWorkstations, 'standard', 'windows', 'standard, in the second managed OU (OU=Branch)'),
  pc('WS-VIP-01', OU.workstations, 'vip', 'windows', 'protected (VIP): member of GG-VIP', { memberOf: ['GG-VIP'] }),
  pc('SRV-NORIGHTS-01', OU.noLapsRights, 'standard', 'windows', 'laps_no_password', { os: SRV22 }),
  pc('DC1', null, 'dc', 'none', 'the real domain controller dc1 (127.0.0.1)', { existing: true }),
  pc('DC2', null, 'dc', 'none', 'the real domain controller dc2 (127.0.0.2)', { existing: true }),
  pc('SRV-DCLIKE-01', OU.servers, 'dc', 'windows', 'SERVER_TRUST_ACCOUNT (0x2000) added over LDAP; Samba sets primaryGroupID 516 (Domain Controllers) itself', { uac: UAC.SERVER_TRUST_ACCOUNT, os: SRV22 }),
  pc('SRV-RODC-01', OU.servers, 'rodc', 'windows', 'PARTIAL_SECRETS_ACCOUNT | WORKSTATION_TRUST_ACCOUNT (0x4001000); Samba sets primaryGroupID 521 (Read-only Domain Controllers) itself; a real RODC also has TRUSTED_TO_AUTH_FOR_DELEGATION, left out to keep the signal alone', { uac: UAC.PARTIAL_SECRETS_ACCOUNT | WKS, os: SRV22 }),
  pc('SRV-UNCON-01', OU.servers, 'unconstrained_delegation', 'windows', 'TRUSTED_FOR_DELEGATION (0x80000)', { uac: WKS | UAC.TRUSTED_FOR_DELEGATION, os: SRV22 }),
  pc('SRV-PT-01', OU.servers, 'protocol_transition', 'windows', 'TRUSTED_TO_AUTH_FOR_DELEGATION (0x1000000)', { uac: WKS | UAC.TRUSTED_TO_AUTH_FOR_DELEGATION, os: SRV22 }),
  pc('WS-SENS-DIRECT', OU.workstations, 'sensitive_group_direct', 'windows', 'direct member of the builtin Server Operators', { memberOf: ['Server Operators'] }),
  pc('WS-SENS-NESTED', OU.workstations, 'sensitive_group_nested', 'windows', 'member of GG-Nested-Sensitive, itself a member of Server Operators', { memberOf: ['GG-Nested-Sensitive'] }),
  pc('WS-SENS-PRIMARY', OU.workstations, 'sensitive_group_primary', 'windows', 'primaryGroupID 512 (Domain Admins): made a member first, then the primary group; the directory then lists it in no member attribute of Domain Admins', { memberOf: ['Domain Admins'], primaryGroup: 'Domain Admins' }),
  pc('WS-ADMINCOUNT', OU.workstations, 'admin_count', 'windows', 'adminCount=1', { adminCount: 1 }),
  pc('SRV-T0-01', OU.tier0, 'tier0_ou', 'windows', 'below the Tier 0 OU', { os: SRV22 }),
  pc('WS-OTHER-01', OU.unmanaged, 'unmanaged', 'windows', 'outside every managed OU (OU=Unmanaged)'),
];

// LAPS passwords: recognisable canaries (tests search logs and stores for 'LAPS-CANARY-')
const LAPS_ACCOUNT = 'Administrator';
const canary = (name, kind) => {
  if (name === 'WS-STD-01' && kind === 'windows') return 'LAPS-CANARY-WS-STD-01-Zürich€✓"q\'\\/{}[]<&>:,';
  const h = crypto.createHash('sha256').update(`${name}/${kind}`).digest('hex');
  return `LAPS-CANARY-${name}-${{ windows: 'win', legacy: 'legacy', encrypted: 'enc' }[kind]}-${h.slice(0, 4)}#${h.slice(4, 8).toUpperCase()}`;
};
const lapsPasswords = (c) => ({
  windows: c.laps === 'windows' ? canary(c.name, 'windows') : undefined,
  legacy: c.laps === 'legacy' || c.legacyToo ? canary(c.name, 'legacy') : undefined,
});
// the stored times: updated at a fixed date, expiring 10 years after seeding (a long-lived local directory)
const LAPS_UPDATED = Date.UTC(2025, 0, 1);
const LAPS_EXPIRES = String(fileTime(Date.now() + 3650 * 864e5));
// msLAPS-EncryptedPassword layout (MS-ADA2 2.66): update time (upper, lower DWORD), size, reserved,
// then the encrypted blob: here a fake one that nothing can decrypt
function fakeEncryptedLaps(name) {
  const blob = Buffer.concat([Buffer.from([0x30, 0x82, 0x01, 0x00]), Buffer.from(`${canary(name, 'encrypted')} not a real CMS blob`), crypto.createHash('sha512').update(name).digest()]);
  const head = Buffer.alloc(16);
  const ft = fileTime(LAPS_UPDATED);
  head.writeUInt32LE(Number(ft >> 32n), 0);
  head.writeUInt32LE(Number(ft & 0xffffffffn), 4);
  head.writeUInt32LE(blob.length, 8);
  return Buffer.concat([head, blob]);
}

// BitLocker recovery information (msFVE-RecoveryInformation objects below the computer, as Windows
// writes them): CN '<date>{<recovery GUID>}', msFVE-RecoveryGuid, msFVE-VolumeGuid and the
// 48-digit recovery password (8 groups of 6 digits, each group a multiple of 11, as BitLocker's).
// [computer, how many entries]: computers not listed have none (WS-STD-04, WS-STD-02, ...).
const BITLOCKER = [['WS-STD-01', 2], ['WS-STD-05', 1], ['WS-BR-01', 1], ['WS-VIP-01', 1], ['SRV-NORIGHTS-01', 1], ['SRV-T0-01', 1], ['WS-SENS-DIRECT', 1], ['WS-OTHER-01', 1]];
const hashOf = (s) => crypto.createHash('sha256').update(s).digest();
/** A deterministic GUID string (upper case, as BitLocker shows key ids) from a label. */
const guidFrom = (label) => {
  const h = hashOf(label).toString('hex').toUpperCase();
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-A${h.slice(17, 20)}-${h.slice(20, 32)}`;
};
/** The GUID string -> its 16 bytes as the directory stores them (first three groups little-endian). */
const guidBytes = (g) => {
  const h = g.replace(/-/g, '');
  const le = (x) => x.match(/../g).reverse().join('');
  return Buffer.from(le(h.slice(0, 8)) + le(h.slice(8, 12)) + le(h.slice(12, 16)) + h.slice(16), 'hex');
};
const recoveryPassword = (label) => {
  const h = hashOf(`bitlocker-password/${label}`);
  return Array.from({ length: 8 }, (_, i) => String((h.readUInt16BE(i * 2) % 65536) * 11).padStart(6, '0')).join('-');
};
const bitlockerEntries = (name) => {
  const n = BITLOCKER.find(([c]) => c === name)?.[1] ?? 0;
  // the first volume (C:) twice on WS-STD-01: an older key and the current one
  return Array.from({ length: n }, (_, i) => {
    const keyId = guidFrom(`bitlocker-key/${name}/${i}`);
    const volumeGuid = guidFrom(`bitlocker-volume/${name}/${name === 'WS-STD-01' ? 0 : i}`);
    const date = new Date(Date.UTC(2025, 2 + i, 10 + i, 9, 30, 0));
    const cn = `${date.toISOString().slice(0, 19)}-00:00{${keyId}}`;
    return { keyId, volumeGuid, date: date.toISOString(), cn, password: recoveryPassword(`${name}/${i}`) };
  });
};

/**
 * The recovery objects, created after the rights on their OUs (dc.sh): each takes its inherited
 * ACEs when it is created, on every DC (a DC that receives a parent's changed DACL by replication
 * does not recompute its existing children here). One already there is deleted and created again.
 */
async function bitlocker() {
  const c = await connect(DCS[0].url, ADMIN_UPN, adminPassword());
  try {
    let added = 0;
    for (const [name] of BITLOCKER) {
      const pcDef = COMPUTERS.find((x) => x.name === name);
      for (const e of bitlockerEntries(name)) {
        const dn = `CN=${e.cn},${computerDn(pcDef)}`;
        const entry = {
          objectClass: ['top', 'msFVE-RecoveryInformation'],
          'msFVE-RecoveryGuid': guidBytes(e.keyId),
          'msFVE-VolumeGuid': guidBytes(e.volumeGuid),
          'msFVE-RecoveryPassword': e.password,
        };
        if (!(await addOnce(c, dn, entry))) {
          await c.del(dn);
          await addOnce(c, dn, entry);
        }
        added++;
      }
    }
    console.log(`[directory] seed: ${added} BitLocker recovery objects`);
  } finally {
    await c.unbind();
  }
}

/** The BitLocker account alone (an existing directory gains it at the next ensure). */
async function bitlockerAccount() {
  const c = await connect(DCS[0].url, ADMIN_UPN, adminPassword());
  try {
    const t = TECHNICAL.find((x) => x.key === 'bitlocker');
    await addOnce(c, `CN=${t.username},${OU.serviceAccounts}`, {
      objectClass: ['top', 'person', 'organizationalPerson', 'user'],
      sAMAccountName: t.username, userPrincipalName: upn(t.username), displayName: t.username, description: t.note,
      userAccountControl: String(UAC.NORMAL_ACCOUNT | UAC.DONT_EXPIRE_PASSWORD), unicodePwd: unicodePwd(t.password),
    });
  } finally {
    await c.unbind();
  }
}

// ---------------------------------------------------------------------------------------------
const upn = (username) => `${username}@${DOMAIN}`;
const groupDn = (name) => BUILTIN[name] ?? (() => { const g = GROUPS.find((x) => x.name === name); return `CN=${g.name},${g.ou}`; })();
const userDn = (u) => `CN=${u.username},${u.ou}`;
const computerDn = (c) => `CN=${c.name},${c.ou}`;
const unicodePwd = (pw) => Buffer.from(`"${pw}"`, 'utf16le');
const change = (operation, type, vals) => new Change({ operation, modification: new Attribute({ type, values: Array.isArray(vals) ? vals : [vals] }) });

async function addOnce(c, dn, entry) {
  const err = await errorOf(c.add(dn, entry));
  if (err && err.code !== 68) throw new Error(`add ${dn}: ${err.message}`); // 68 entryAlreadyExists
  return !err;
}
async function addMember(c, group, member) {
  const err = await errorOf(c.modify(group, change('add', 'member', member)));
  if (err && err.code !== 68 && err.code !== 20) throw new Error(`add ${member} to ${group}: ${err.message}`);
}

async function provision() {
  const t0 = Date.now();
  const c = await connect(DCS[0].url, ADMIN_UPN, adminPassword());
  // a long-lived test directory: passwords never expire and may be changed again at once
  await c.modify(BASE, [change('replace', 'maxPwdAge', '-9223372036854775808'), change('replace', 'minPwdAge', '0')]);
  for (const [dn, , description] of OUS) await addOnce(c, dn, { objectClass: ['top', 'organizationalUnit'], description });
  for (const g of GROUPS) {
    // global security group (groupType 0x80000002)
    await addOnce(c, groupDn(g.name), { objectClass: ['top', 'group'], sAMAccountName: g.name, groupType: String(-2147483646), description: g.note });
  }
  const addUser = (dn, u, uac, extra = {}) => addOnce(c, dn, {
    objectClass: ['top', 'person', 'organizationalPerson', 'user'],
    sAMAccountName: u.username, userPrincipalName: upn(u.username), ...extra,
    userAccountControl: String(uac), unicodePwd: unicodePwd(u.password),
  });
  for (const u of USERS) {
    await addUser(userDn(u), u, UAC.NORMAL_ACCOUNT | (u.disabled ? UAC.ACCOUNTDISABLE : 0), {
      givenName: u.givenName, sn: u.sn, displayName: `${u.givenName} ${u.sn}`, mail: upn(u.username), description: u.note,
      ...(u.adminCount ? { adminCount: String(u.adminCount) } : {}),
    });
  }
  for (const t of TECHNICAL) {
    await addUser(`CN=${t.username},${OU.serviceAccounts}`, t, UAC.NORMAL_ACCOUNT | UAC.DONT_EXPIRE_PASSWORD, { displayName: t.username, description: t.note });
  }
  for (const pcDef of COMPUTERS.filter((x) => !x.existing)) {
    // an LDAP add with a trust-account UAC gives an enabled computer (samba-tool's are disabled)
    await addOnce(c, computerDn(pcDef), {
      objectClass: ['top', 'person', 'organizationalPerson', 'user', 'computer'],
      sAMAccountName: `${pcDef.name}$`, userAccountControl: String(pcDef.uac),
      dNSHostName: `${pcDef.name.toLowerCase()}.${DOMAIN}`, operatingSystem: pcDef.os ?? WIN11,
      description: pcDef.note,
      ...(pcDef.adminCount ? { adminCount: String(pcDef.adminCount) } : {}),
    });
  }
  // memberships (nested groups first), then primary groups
  for (const g of GROUPS) for (const m of g.memberOf ?? []) await addMember(c, groupDn(m), groupDn(g.name));
  for (const u of USERS) for (const m of u.memberOf ?? []) await addMember(c, groupDn(m), userDn(u));
  for (const pcDef of COMPUTERS.filter((x) => !x.existing)) {
    const dn = computerDn(pcDef);
    if (pcDef.primaryGroup) {
      const rid = (await c.search(groupDn(pcDef.primaryGroup), { scope: 'base', attributes: ['primaryGroupToken'] })).searchEntries[0].primaryGroupToken;
      const current = value((await c.search(dn, { scope: 'base', attributes: ['primaryGroupID'] })).searchEntries[0], 'primaryGroupID');
      // AD rule: a member first, then the primary group (the explicit membership then disappears)
      if (current !== String(rid)) {
        for (const m of pcDef.memberOf ?? []) await addMember(c, groupDn(m), dn);
        await c.modify(dn, change('replace', 'primaryGroupID', String(rid)));
      }
    } else {
      for (const m of pcDef.memberOf ?? []) await addMember(c, groupDn(m), dn);
    }
  }
  // LAPS values (Administrator writes them; devices would in a real domain)
  for (const pcDef of COMPUTERS.filter((x) => !x.existing && x.laps !== 'none')) {
    const pw = lapsPasswords(pcDef);
    const changes = [];
    if (pw.windows) {
      const json = JSON.stringify({ n: LAPS_ACCOUNT, t: fileTime(LAPS_UPDATED).toString(16), p: pw.windows });
      changes.push(change('replace', 'msLAPS-Password', json), change('replace', 'msLAPS-PasswordExpirationTime', LAPS_EXPIRES));
    }
    if (pw.legacy) changes.push(change('replace', 'ms-Mcs-AdmPwd', pw.legacy), change('replace', 'ms-Mcs-AdmPwdExpirationTime', LAPS_EXPIRES));
    if (pcDef.laps === 'encrypted') {
      changes.push(change('replace', 'msLAPS-EncryptedPassword', fakeEncryptedLaps(pcDef.name)), change('replace', 'msLAPS-PasswordExpirationTime', LAPS_EXPIRES));
    }
    await c.modify(computerDn(pcDef), changes);
  }
  await lockOut(c);
  await c.unbind();
  console.log(`[directory] seed: ${OUS.length} OUs, ${GROUPS.length} groups, ${USERS.length + TECHNICAL.length} users, ${COMPUTERS.length - 2} computers (${Date.now() - t0} ms)`);
}

// dave: a password settings object (fine-grained policy) applying to dave only gives him a lockout
// threshold; real failed binds then lock him out (lockoutTime is set by the DC, as in AD)
async function lockOut(c) {
  for (const u of USERS.filter((x) => x.lockOut)) {
    const dn = userDn(u);
    await addOnce(c, `CN=PSO-Lockout-${u.username},CN=Password Settings Container,CN=System,${BASE}`, {
      objectClass: ['top', 'msDS-PasswordSettings'],
      'msDS-PasswordSettingsPrecedence': '10',
      'msDS-PasswordReversibleEncryptionEnabled': 'FALSE',
      'msDS-PasswordHistoryLength': '0',
      'msDS-PasswordComplexityEnabled': 'TRUE',
      'msDS-MinimumPasswordLength': '7',
      'msDS-MinimumPasswordAge': '0',
      'msDS-MaximumPasswordAge': '-9223372036854775808',
      'msDS-LockoutThreshold': '3',
      'msDS-LockoutObservationWindow': '-18000000000',
      'msDS-LockoutDuration': '-9223372036854775808',
      'msDS-PSOAppliesTo': dn,
    });
    const lockoutTime = async () => value((await c.search(dn, { scope: 'base', attributes: ['lockoutTime'] })).searchEntries[0], 'lockoutTime') ?? '0';
    for (let i = 0; i < 5 && (await lockoutTime()) === '0'; i++) {
      await errorOf(connect(DCS[0].url, upn(u.username), 'wrong-password').then((x) => x.unbind()));
    }
    const lt = await lockoutTime();
    if (lt === '0') throw new Error(`${u.username}: lockoutTime still 0 after failed binds`);
  }
}

// ---------------------------------------------------------------------------------------------
// seed.json: everything above, with what the directory says now (DNs, GUIDs, SIDs, memberships)
// ---------------------------------------------------------------------------------------------
async function describe() {
  const password = adminPassword();
  let c, dc;
  for (const d of DCS) {
    c = await connect(d.url, ADMIN_UPN, password).catch(() => undefined);
    if (c) { dc = d; break; }
  }
  if (!c) throw new Error('no DC answers LDAPS');
  const accounts = [...USERS.map((u) => u.username), ...TECHNICAL.map((t) => t.username), 'Administrator',
    ...GROUPS.map((g) => g.name), 'Domain Admins', 'Server Operators', ...COMPUTERS.map((x) => `${x.name}$`)];
  const filter = `(|${accounts.map((a) => `(sAMAccountName=${a})`).join('')})`;
  const attributes = ['sAMAccountName', 'objectGUID', 'objectSid', 'memberOf', 'member', 'userAccountControl', 'lockoutTime', 'primaryGroupID', 'adminCount', 'dNSHostName', 'msDS-User-Account-Control-Computed'];
  const { searchEntries } = await c.search(BASE, { filter, attributes, explicitBufferAttributes: ['objectGUID', 'objectSid'], paged: true });
  const byName = new Map(searchEntries.map((e) => [String(value(e, 'sAMAccountName')).toLowerCase(), e]));
  const ous = (await c.search(BASE, { filter: '(objectClass=organizationalUnit)', attributes: ['objectGUID'], explicitBufferAttributes: ['objectGUID'] })).searchEntries;
  const ouGuid = new Map(ous.map((e) => [e.dn.toLowerCase(), guidToString(value(e, 'objectGUID'))]));
  await c.unbind();

  const missing = [];
  const find = (sam) => {
    const e = byName.get(sam.toLowerCase());
    if (!e) missing.push(sam);
    return e;
  };
  const ids = (e) => (e ? { dn: e.dn, guid: guidToString(value(e, 'objectGUID')), sid: sidToString(value(e, 'objectSid')) } : { dn: null, guid: null, sid: null });
  const names = (dns) => dns.map(rdnValue);
  const uac = (e) => Number(value(e, 'userAccountControl') ?? 0);

  const users = USERS.map((u) => {
    const e = find(u.username);
    return {
      username: u.username, upn: upn(u.username), password: u.password, kind: u.kind, ...ids(e), note: u.note,
      groups: e ? names(values(e, 'memberOf')) : [],
      disabled: e ? (uac(e) & UAC.ACCOUNTDISABLE) !== 0 : null,
      lockedOut: e ? (Number(value(e, 'msDS-User-Account-Control-Computed') ?? 0) & 0x10) !== 0 : null,
      lockoutTime: e ? String(value(e, 'lockoutTime') ?? '0') : null,
      ...(u.adminCount ? { adminCount: u.adminCount } : {}),
    };
  });
  const technicalAccounts = Object.fromEntries(TECHNICAL.map((t) => {
    const { dn, guid, sid } = ids(find(t.username));
    return [t.key, { username: t.username, upn: upn(t.username), password: t.password, dn, guid, sid, note: t.note }];
  }));
  const groups = GROUPS.map((g) => {
    const e = find(g.name);
    return { name: g.name, ...ids(e), note: g.note, members: e ? names(values(e, 'member')) : [], memberOf: e ? names(values(e, 'memberOf')) : [] };
  });
  const computers = COMPUTERS.map((x) => {
    const e = find(`${x.name}$`);
    const pw = lapsPasswords(x);
    return {
      name: x.name, ...ids(e), class: x.class, laps: x.laps, note: x.note,
      dnsHostName: e ? value(e, 'dNSHostName') ?? null : null,
      userAccountControl: e ? uac(e) : null,
      primaryGroupID: e ? Number(value(e, 'primaryGroupID')) : null,
      groups: e ? names(values(e, 'memberOf')) : [],
      ...(pw.windows || pw.legacy ? { lapsAccount: LAPS_ACCOUNT } : {}),
      ...(pw.windows ? { lapsPassword: pw.windows } : {}),
      ...(pw.legacy ? { lapsLegacyPassword: pw.legacy } : {}),
      bitlocker: bitlockerEntries(x.name).map(({ keyId, volumeGuid, date, cn, password: recovery }) => ({ keyId, volumeGuid, date, dn: e ? `CN=${cn},${e.dn}` : null, password: recovery })),
    };
  });
  const sensitiveGroups = Object.entries(BUILTIN).map(([name]) => ({ name, ...ids(find(name)) }));
  const admin = find('Administrator');
  const seed = {
    domain: DOMAIN, netbios: NETBIOS, baseDn: BASE, caFile: CA_FILE,
    dcs: DCS,
    discovery: DISCOVERY,
    admin: { upn: ADMIN_UPN, password, dn: admin?.dn ?? null },
    technicalAccounts,
    managedOus: [OU.managed, OU.branch],
    tier0Ous: [OU.tier0],
    unmanagedOus: [OU.unmanaged, OU.staff, OU.serviceAccounts],
    ous: OUS.map(([dn, kind, description]) => ({ dn, guid: ouGuid.get(dn.toLowerCase()) ?? null, kind, description })),
    protectedGroups: [groupDn('GG-VIP')],
    sensitiveGroups,
    users, groups, computers,
    readFrom: dc.name,
    generatedAt: new Date().toISOString(),
  };
  fs.writeFileSync(`${SEED_FILE}.tmp`, `${JSON.stringify(seed, null, 2)}\n`);
  fs.renameSync(`${SEED_FILE}.tmp`, SEED_FILE);
  if (missing.length) console.log(`[directory] WARNING: not in the directory: ${missing.join(', ')}`);
  console.log(`[directory] seed.json written (${users.length} users, ${groups.length} groups, ${computers.length} computers, read from ${dc.name})`);
}

async function replication() {
  const password = adminPassword();
  const [a, b] = await Promise.all(DCS.map(async (d) => ({ ...d, client: await connect(d.url, ADMIN_UPN, password) })));
  try {
    for (const [from, to] of [[a, b], [b, a]]) {
      const ms = await checkReplication(from, to);
      console.log(`[directory] replication ${from.name} -> ${to.name}: ${ms} ms`);
    }
  } finally {
    await Promise.all([a.client.unbind(), b.client.unbind()]);
  }
}

const modes = { provision, describe, replication, bitlocker, 'bitlocker-account': bitlockerAccount };
const mode = process.argv[2];
if (!modes[mode]) {
  console.error('usage: node seed.mjs provision|describe|replication|bitlocker-account|bitlocker');
  process.exit(2);
}
await modes[mode]().catch((err) => {
  console.error(`[directory] seed.mjs ${mode}: ${err.stack ?? err}`);
  process.exit(1);
});
