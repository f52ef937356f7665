import type { Store } from '../store';
import { getRecord, putRecord, type Rec } from '../store/records';
import { forgetRequestRead, readOncePerRequest, shareRequestRead } from '../request-scope';

// Instance settings: written by the setup wizard, then by directory-connection changes.
// Technical-account passwords are sealed (AES-256-GCM under the master key, AAD names the account).

export const STEP_UP_MODES = ['authenticator', 'password', 'none', 'passkey'] as const;
export type StepUpMode = (typeof STEP_UP_MODES)[number];

export interface SealedAccount {
  user: string;
  sealedPassword: string;
}
export interface ManagedOu {
  dn: string;
  guid: string;
}
/**
 * Access-platform sign-in (console spec, Authentication 6): operators whose platform role (or
 * trait value) matches are treated as members of the directory group; that group is protected.
 * The group is resolved (DN or SID → DN, GUID, SID) when the mapping set is saved.
 */
export interface AccessMapping {
  role?: string;
  trait?: string;
  value?: string;
  group: { dn: string; guid: string; sid: string };
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
  /** UPN suffixes operators may give accounts (console spec, Directory connection changes); unset: the domain */
  upnSuffixes?: string[];
  tierOus: ManagedOu[];
  protectedGroups: Array<{ dn: string; guid: string; sid: string }>;
  superAdministrators: string[]; // objectGUIDs
  stepUpMode: StepUpMode;
  /** sign-in with a discoverable passkey alone, without the password (issue 32; an administrator's choice, default off) */
  passkeySignIn?: boolean;
  configuredAt: string;
  accessMappings?: AccessMapping[];
}

/** The SIDs of the protected groups: the configured list and the groups access-platform mappings name. */
export const protectedGroupSidsOf = (s: Pick<InstanceSettings, 'protectedGroups' | 'accessMappings'>): string[] => [
  ...new Set([...s.protectedGroups.map((g) => g.sid), ...(s.accessMappings ?? []).map((m) => m.group.sid)]),
];

const PK = 'INSTANCE';
/** The settings' item (a request's batch read names it: lib/http/middlewares/session.ts) */
export const SETTINGS_KEY = { pk: PK, sk: 'SETTINGS' };

const fromRecord = (rec: Rec<InstanceSettings> | undefined) => rec && { settings: rec.data, version: rec.version };

export async function readSettings(store: Store): Promise<{ settings: InstanceSettings; version: number } | undefined> {
  return fromRecord(await getRecord<InstanceSettings>(store, PK, 'SETTINGS'));
}

const REQUEST_READ = 'instance-settings';
/** The settings as this request first read them (one consistent read per request, see lib/request-scope). */
export const readSettingsOncePerRequest = (store: Store) => readOncePerRequest(REQUEST_READ, () => readSettings(store));
/** The settings' item read by a batch becomes this request's read of the settings. */
export const shareSettingsRead = (rec: Promise<Rec<unknown> | undefined>) => shareRequestRead(REQUEST_READ, rec.then((r) => fromRecord(r as Rec<InstanceSettings> | undefined)));

export async function writeSettings(store: Store, settings: InstanceSettings, expectVersion: number): Promise<boolean> {
  forgetRequestRead(REQUEST_READ);
  const written = await putRecord(store, PK, 'SETTINGS', settings, { expectVersion });
  forgetRequestRead(REQUEST_READ); // a read started meanwhile may hold the old settings
  return written;
}
