import { z } from 'zod';
import type { Store } from '../store';
import { getRecord, putRecord } from '../store/records';

// Instance settings: written by the setup wizard, then by directory-connection changes.
// Technical-account passwords are sealed (AES-256-GCM under the master key, AAD names the account).

export const STEP_UP_MODES = ['authenticator', 'password', 'none'] as const;
export type StepUpMode = (typeof STEP_UP_MODES)[number];

const REFUSED_PORTS = new Set(['389', '3268', '3269']);

/** ldaps://host[:636] only (console spec: LDAPS 636 only; 389, 3268 and 3269 refused). */
export const dcUrlSchema = z.string().superRefine((value, ctx) => {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'not a URL', params: { code: 'invalid_dc_url' } });
    return;
  }
  if (u.protocol !== 'ldaps:') ctx.addIssue({ code: 'custom', message: 'only ldaps:// is accepted', params: { code: 'ldaps_required' } });
  else if (REFUSED_PORTS.has(u.port)) ctx.addIssue({ code: 'custom', message: `port ${u.port} is refused: LDAPS 636 only`, params: { code: 'ldaps_port_refused' } });
  else if (u.port && u.port !== '636') ctx.addIssue({ code: 'custom', message: 'LDAPS port must be 636', params: { code: 'ldaps_port_refused' } });
  if (u.pathname && u.pathname !== '/' && u.pathname !== '') ctx.addIssue({ code: 'custom', message: 'no path allowed' });
});

/** A PEM with one or more CERTIFICATE blocks and never a private key. */
export const caPemSchema = z
  .string()
  .max(200_000)
  .refine((pem) => !/PRIVATE KEY/.test(pem), { message: 'the CA PEM contains a private key: refused', params: { code: 'ca_contains_private_key' } })
  .refine((pem) => /-----BEGIN CERTIFICATE-----/.test(pem), { message: 'no certificate in PEM' });

export interface SealedAccount {
  user: string;
  sealedPassword: string;
}
export interface ManagedOu {
  dn: string;
  guid: string;
}
export interface InstanceSettings {
  domain: string;
  baseDn: string;
  dcs: Array<{ name: string; url: string }>;
  caPem: string;
  readAccount: SealedAccount;
  writeAccount: SealedAccount;
  lapsIdentityUpn?: string;
  managedOus: ManagedOu[];
  tierOus: ManagedOu[];
  protectedGroups: Array<{ dn: string; guid: string; sid: string }>;
  superAdministrators: string[]; // objectGUIDs
  stepUpMode: StepUpMode;
  configuredAt: string;
}

const PK = 'INSTANCE';

export async function readSettings(store: Store): Promise<{ settings: InstanceSettings; version: number } | undefined> {
  const rec = await getRecord<InstanceSettings>(store, PK, 'SETTINGS');
  return rec && { settings: rec.data, version: rec.version };
}

export async function writeSettings(store: Store, settings: InstanceSettings, expectVersion: number): Promise<boolean> {
  return putRecord(store, PK, 'SETTINGS', settings, { expectVersion });
}
