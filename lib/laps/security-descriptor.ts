import { guidFromBuffer, sidFromBuffer } from '../directory/guid';

// Reading who may read a confidential attribute, without reading it: the object's DACL (SD flags
// control, DACL only, readable by the object's readers: Directory.readSecurityDescriptor)
// evaluated for Control Access. Used to tell "only an encrypted password is stored" from "no
// right to read the password".

const CONTROL_ACCESS = 0x100;
const GENERIC_ALL = 0x10000000;
const INHERIT_ONLY = 0x08;

export interface Ace {
  type: number;
  flags: number;
  mask: number;
  objectType?: string;
  sid: string;
}

/** The ACEs of a self-relative security descriptor's DACL. */
export function daclAces(sd: Buffer): Ace[] {
  const daclOffset = sd.readUInt32LE(16);
  if (!daclOffset) return [];
  const count = sd.readUInt16LE(daclOffset + 4);
  const aces: Ace[] = [];
  let p = daclOffset + 8;
  for (let i = 0; i < count; i++) {
    const type = sd[p];
    const flags = sd[p + 1];
    const size = sd.readUInt16LE(p + 2);
    const mask = sd.readUInt32LE(p + 4);
    if (type === 5 || type === 6) {
      // object ACE: flags, [object type], [inherited object type], SID
      const oflags = sd.readUInt32LE(p + 8);
      let q = p + 12;
      let objectType: string | undefined;
      if (oflags & 1) {
        objectType = guidFromBuffer(sd.subarray(q, q + 16));
        q += 16;
      }
      if (oflags & 2) q += 16;
      aces.push({ type, flags, mask, objectType, sid: sidFromBuffer(sd.subarray(q, p + size)) });
    } else if (type === 0 || type === 1) {
      aces.push({ type, flags, mask, sid: sidFromBuffer(sd.subarray(p + 8, p + size)) });
    }
    p += size;
  }
  return aces;
}

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
