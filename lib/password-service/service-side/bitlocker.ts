import { firstBuffer, firstValue, recoveryEntry, recoveryFilterByKeyId, RECOVERY_PASSWORD_ATTRIBUTE } from '../../bitlocker/entries';
import type { Directory } from '../../directory';
import type { BitlockerPayload } from '../link';

// The BitLocker reveal's directory read (issue 33), with the BitLocker account only: one recovery
// entry below the computer, by its key id. The directory is the last check: without Control Access
// on the confidential msFVE-RecoveryPassword the attribute is not returned (`bitlocker_no_password`);
// an entry the account cannot see at all answers like an unknown one (`bitlocker_key_not_found`).

/** 48 digits in 8 groups of 6: anything else is not shown. */
const RECOVERY_PASSWORD_RE = /^\d{6}(-\d{6}){7}$/;

export async function readRecoveryPassword(dir: Directory, computerDn: string, keyId: string): Promise<BitlockerPayload | 'bitlocker_key_not_found' | 'bitlocker_no_password'> {
  const found = await dir.search({ base: computerDn, scope: 'one', filter: recoveryFilterByKeyId(keyId), attributes: ['objectGUID', 'cn', 'whenCreated', RECOVERY_PASSWORD_ATTRIBUTE], max: 2 });
  const hit = found.entries.find((e) => recoveryEntry(firstValue(e.attributes.cn) ?? '', undefined, undefined)?.keyId === keyId.toUpperCase());
  if (!hit) return 'bitlocker_key_not_found';
  const password = firstValue(hit.attributes[RECOVERY_PASSWORD_ATTRIBUTE]) ?? firstValue(hit.attributes[RECOVERY_PASSWORD_ATTRIBUTE.toLowerCase()]);
  if (!password || !RECOVERY_PASSWORD_RE.test(password.trim())) return 'bitlocker_no_password';
  const volume = firstBuffer((await dir.readAttributes(hit.dn, ['msFVE-VolumeGuid'], { binary: ['msFVE-VolumeGuid'] }))?.['msFVE-VolumeGuid']);
  const entry = recoveryEntry(firstValue(hit.attributes.cn) ?? '', firstValue(hit.attributes.whenCreated), volume)!;
  return { keyId: entry.keyId, volumeGuid: entry.volumeGuid, recoveryPassword: password.trim(), date: entry.date };
}
