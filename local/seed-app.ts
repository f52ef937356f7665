import fs from 'node:fs';
import path from 'node:path';
import * as OTPAuth from 'otpauth';
import { setAuthenticator } from '../lib/auth/operators';
import { putDelegation, putRole, type Assignee } from '../lib/authz/rights';
import type { Permission } from '../lib/authz/permissions';
import { issueSetupToken } from '../lib/setup';
import { readSettings } from '../lib/setup/settings';
import { DirectoryPool, LdapDirectory, type Directory } from '../lib/directory';
import type { Store } from '../lib/store';
import { ConsoleClient } from './console-client';
import { DATA_DIR, log } from './processes';

// Seed data of the console on top of the seeded directory: setup (through the real route),
// roles and delegations, authenticators of the seeded operators (not op-enrol: it enrols).

export interface DirectorySeed {
  domain: string;
  netbios: string;
  baseDn: string;
  caFile: string;
  dcs: Array<{ name: string; host: string; url: string }>;
  admin: { upn: string; password: string };
  technicalAccounts: Record<'read' | 'write' | 'reset' | 'laps' | 'bitlocker', { upn: string; password: string; dn: string }>;
  managedOus: string[];
  tier0Ous: string[];
  unmanagedOus: string[];
  protectedGroups: string[];
  users: Array<{ username: string; password: string; dn: string; guid: string; note: string; groups?: string[] }>;
  groups: Array<{ name: string; dn: string; guid: string; note?: string; sid?: string }>;
  computers: Array<{ name: string; dn: string; guid: string; class: string; laps: string; note?: string }>;
}

export interface StackAccount {
  username: string;
  password: string;
  totpSecret?: string;
  roles: string[];
  note: string;
}

const ROLES: Array<{ id: string; name: string; permissions: Permission[] }> = [
  {
    id: 'helpdesk',
    name: 'Helpdesk',
    permissions: ['computers.read', 'computers.laps.read', 'computers.laps.expire', 'computers.bitlocker.read', 'users.read', 'groups.read', 'users.unlock', 'users.password.reset'],
  },
  { id: 'auditor', name: 'Auditor', permissions: ['audit.read', 'users.read', 'groups.read', 'computers.read'] },
  {
    id: 'approver',
    name: 'Approver',
    permissions: ['users.read', 'groups.read', 'users.password.reset', 'users.unlock', 'users.disable', 'users.enable', 'users.attributes.write', 'groups.members.write'],
  },
];

/** Operator accounts of the seed and the roles the console gives them. */
const OPERATORS: Record<string, { roles: string[]; note: string; totp: boolean }> = {
  'op-super': { roles: ['Super administrator'], note: 'Super administrator (designated by setup)', totp: true },
  'op-helpdesk': { roles: ['Helpdesk@Managed'], note: 'Helpdesk on OU=Managed through nested group GG-Helpdesk', totp: true },
  'op-branch': { roles: ['Helpdesk@Branch'], note: 'Helpdesk on OU=Branch only', totp: true },
  'op-auditor': { roles: ['Auditor@Managed'], note: 'audit.read', totp: true },
  'op-approver': { roles: ['Approver@Managed'], note: 'approver through GG-Approvers', totp: true },
  'op-approver2': { roles: ['Approver@Managed'], note: 'second approver through GG-Approvers', totp: true },
  'op-enrol': { roles: ['Helpdesk@Managed'], note: 'has a role, no authenticator yet: enrols at sign-in', totp: false },
  'op-norole': { roles: [], note: 'directory user with no console role: sign-in refused', totp: false },
};

function totpSecrets(): Record<string, string> {
  const file = path.join(DATA_DIR, 'secrets/totp.json');
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const existing: Record<string, string> = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : {};
  for (const [name, o] of Object.entries(OPERATORS)) if (o.totp && !existing[name]) existing[name] = new OTPAuth.Secret({ size: 20 }).base32;
  fs.writeFileSync(file, JSON.stringify(existing, null, 2), { mode: 0o600 });
  return existing;
}

/** The seeded directory, read with the console's read account (the local starter and tests). */
export function seedDirectory(seed: DirectorySeed): Directory {
  const pool = new DirectoryPool(
    seed.dcs.map((d) => ({ name: d.name, url: d.url })),
    { caPem: fs.readFileSync(seed.caFile, 'utf8'), connectTimeoutMs: 5000, operationTimeoutMs: 15000, cooldownMs: 60000, probeIntervalMs: 0, pageSize: 500, searchMaxResults: 5000 },
  );
  const creds = seed.technicalAccounts.read;
  return new LdapDirectory(pool, seed.baseDn, async () => ({ user: creds.upn, password: creds.password }));
}

/**
 * `dcs`: the DCs as the console reaches them when that differs from this host (a container on a
 * bridge network reaches them through a forwarder, by name: tests/containers/isolation.test.ts).
 */
export async function seedConsole(store: Store, masterKey: Buffer, consoleUrl: string, seed: DirectorySeed, opts: { dcs?: Array<{ name: string; url: string }> } = {}): Promise<StackAccount[]> {
  // a kept store (npm start's SQLite files, from an earlier start) is configured already: its
  // roles, delegations, operators and audit are the user's now; only the accounts are listed again
  if (await readSettings(store)) {
    log('the store is configured already (kept from an earlier start): setup and seed data left as they are');
    return seedAccounts(totpSecrets(), seed);
  }
  const token = await issueSetupToken(store);
  log(`setup token issued (used at once for the seeded directory)`);
  const client = new ConsoleClient(consoleUrl);
  await client.antiforgery();
  const ou = (name: string) => seed.managedOus.find((d) => d.toLowerCase().startsWith(`ou=${name.toLowerCase()},`))!;
  const r = await client.post(
    '/api/setup',
    {
      domain: seed.domain,
      dcs: opts.dcs ?? seed.dcs.map((d) => ({ name: d.name, url: d.url })),
      caPem: fs.readFileSync(seed.caFile, 'utf8'),
      readAccount: { user: seed.technicalAccounts.read.upn, password: seed.technicalAccounts.read.password },
      writeAccount: { user: seed.technicalAccounts.write.upn, password: seed.technicalAccounts.write.password },
      lapsIdentityUpn: seed.technicalAccounts.laps.upn,
      managedOus: seed.managedOus,
      tierOus: seed.tier0Ous,
      protectedGroups: seed.protectedGroups,
      superAdministrator: 'op-super',
    },
    { 'x-setup-token': token },
  );
  if (r.status !== 200) throw new Error(`setup failed: ${r.status} ${r.text}`);

  for (const role of ROLES) await putRole(store, role);
  const dir = seedDirectory(seed);
  const group = async (name: string): Promise<Assignee> => {
    const g = seed.groups.find((x) => x.name === name);
    if (!g) throw new Error(`seed group ${name} missing`);
    const facts = await dir.resolveGroup(g.dn);
    return { kind: 'group', guid: facts.guid, sid: facts.sid, name };
  };
  const user = async (name: string): Promise<Assignee> => {
    const u = seed.users.find((x) => x.username === name);
    const facts = u && (await dir.principalFacts(u.dn));
    if (!facts) throw new Error(`seed user ${name} missing`);
    return { kind: 'user', guid: facts.guid, sid: facts.sid, name };
  };
  const scope = async (name: string) => [await dir.resolveOu(ou(name))];
  await putDelegation(store, { id: 'helpdesk-managed', roleId: 'helpdesk', scope: await scope('Managed'), assignees: [await group('GG-Helpdesk'), await user('op-enrol')] });
  await putDelegation(store, { id: 'helpdesk-branch', roleId: 'helpdesk', scope: await scope('Branch'), assignees: [await user('op-branch')] });
  await putDelegation(store, { id: 'auditor-managed', roleId: 'auditor', scope: await scope('Managed'), assignees: [await user('op-auditor')] });
  await putDelegation(store, { id: 'approver-managed', roleId: 'approver', scope: await scope('Managed'), assignees: [await group('GG-Approvers')] });

  const secrets = totpSecrets();
  for (const [name, o] of Object.entries(OPERATORS)) {
    const u = seed.users.find((x) => x.username === name)!;
    if (o.totp) await setAuthenticator(store, masterKey, u.guid, name, secrets[name]);
  }
  return seedAccounts(secrets, seed);
}

/** The seeded operators as `npm start` prints them. */
function seedAccounts(secrets: Record<string, string>, seed: DirectorySeed): StackAccount[] {
  return Object.entries(OPERATORS).map(([name, o]) => {
    const u = seed.users.find((x) => x.username === name);
    if (!u) throw new Error(`seed user ${name} missing`);
    return { username: name, password: u.password, ...(o.totp ? { totpSecret: secrets[name] } : {}), roles: o.roles, note: o.note };
  });
}
