import { ACE_FLAG, daclAces, RIGHT, type Ace } from '../directory/security-descriptor';

// Reading who may read a confidential attribute, without reading it: the object's DACL (SD flags
// control, DACL only, readable by the object's readers: Directory.readSecurityDescriptor)
// evaluated for Control Access. Used to tell "only an encrypted password is stored" from "no
// right to read the password".

const CONTROL_ACCESS = RIGHT.CONTROL_ACCESS;
const GENERIC_ALL = RIGHT.GENERIC_ALL;
const INHERIT_ONLY = ACE_FLAG.INHERIT_ONLY;

// the format lives in the directory port (lib/directory/security-descriptor.ts)
export { daclAces, type Ace };

/**
 * Does this DACL give one of `sids` Control Access on the attribute `attributeGuid` (or on all
 * properties)? An explicit deny for the same scope wins, as in Windows' evaluation order.
 */
export function grantsControlAccess(aces: Ace[], sids: Set<string>, attributeGuid: string): boolean {
  const applies = (a: Ace) => !(a.flags & INHERIT_ONLY) && sids.has(a.sid) && (a.mask & (CONTROL_ACCESS | GENERIC_ALL)) !== 0 && (!a.objectType || a.objectType.toLowerCase() === attributeGuid.toLowerCase());
  for (const a of aces) {
    if (!applies(a)) continue;
    if (a.type === 1 || a.type === 6) return false;
    if (a.type === 0 || a.type === 5) return true;
  }
  return false;
}
