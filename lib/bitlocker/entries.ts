import { guidFromBuffer, isGuid } from '../directory/guid';

// BitLocker recovery information as Windows writes it (issue 33): msFVE-RecoveryInformation objects
// below the computer, named '<date>{<recovery GUID>}' (e.g. 2025-03-10T09:30:00-08:00{66620B73-…}),
// with msFVE-RecoveryGuid (the key id the blue screen shows), msFVE-VolumeGuid and the confidential
// msFVE-RecoveryPassword. What both sides need to read them; the password is read by the password
// service only (lib/password-service/service-side/bitlocker.ts).

export const RECOVERY_CLASS = 'msFVE-RecoveryInformation';
export const RECOVERY_PASSWORD_ATTRIBUTE = 'msFVE-RecoveryPassword';
export const RECOVERY_ENTRY_ATTRIBUTES = ['objectGUID', 'cn', 'whenCreated'];

/** One recovery entry as the console lists it: never the password. */
export interface RecoveryEntry {
  /** the full key id (recovery GUID), upper case as BitLocker shows it */
  keyId: string;
  /** its first 8 characters: what a user reads off the recovery screen */
  keyIdPrefix: string;
  volumeGuid: string | null;
  /** when the key was backed up (from the entry's name, else whenCreated) */
  date: string | null;
}

const CN_RE = /^(.*)\{([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\}$/;

/** The key id and date an entry's name carries; undefined for a name not of that form. */
export function parseRecoveryCn(cn: string): { keyId: string; date: string | null } | undefined {
  const m = CN_RE.exec(cn.trim());
  if (!m) return undefined;
  const t = Date.parse(m[1]);
  return { keyId: m[2].toUpperCase(), date: Number.isNaN(t) ? null : new Date(t).toISOString() };
}

/** A GeneralizedTime (20250310093000.0Z) as ISO, or null. */
export function generalizedTimeToIso(v: string | undefined): string | null {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})/.exec(v ?? '');
  return m ? new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6])).toISOString() : null;
}

export function recoveryEntry(cn: string, whenCreated: string | undefined, volumeGuid: Buffer | undefined): RecoveryEntry | undefined {
  const parsed = parseRecoveryCn(cn);
  if (!parsed) return undefined;
  return {
    keyId: parsed.keyId,
    keyIdPrefix: parsed.keyId.slice(0, 8),
    volumeGuid: volumeGuid && volumeGuid.length === 16 ? guidFromBuffer(volumeGuid).toUpperCase() : null,
    date: parsed.date ?? generalizedTimeToIso(whenCreated),
  };
}

/** The first value of an attribute as read (a string, or a binary attribute's Buffer). */
export const firstValue = (v: unknown): string | undefined => (Array.isArray(v) ? (v[0] === undefined ? undefined : String(v[0])) : v === undefined ? undefined : String(v));
/** A binary attribute's bytes as read with `binary` (one Buffer, or the first of several). */
export const firstBuffer = (v: unknown): Buffer | undefined => (Buffer.isBuffer(v) ? v : Array.isArray(v) && Buffer.isBuffer(v[0]) ? (v[0] as Buffer) : undefined);

/** A key id as typed: the full GUID (braces allowed). */
export const normalizeKeyId = (s: string): string | undefined => {
  const v = s.trim().replace(/^\{|\}$/g, '');
  return isGuid(v) ? v.toUpperCase() : undefined;
};

/** A key id prefix as typed off the screen: exactly 8 hexadecimal characters (braces allowed). */
export const keyIdPrefixOf = (q: string): string | undefined => {
  const v = q.trim().replace(/^\{/, '');
  return /^[0-9a-fA-F]{8}$/.test(v) ? v.toUpperCase() : undefined;
};

/** The LDAP filter of one entry below a computer, by its key id (the name ends with '{<key id>}'). */
export const recoveryFilterByKeyId = (keyId: string) => `(&(objectClass=${RECOVERY_CLASS})(cn=*{${keyId}}))`;
