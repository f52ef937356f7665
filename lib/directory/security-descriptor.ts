import { guidBytes, guidFromBuffer, sidFromBuffer } from './guid';

// Security descriptors as the directory stores them (self-relative, [MS-DTYP] 2.4.6): the DACL's
// ACEs read and written, with object types and inherited object types. What a right means is the
// caller's (the delegation export, the LAPS diagnostics); this file only speaks the format.

export const ACE_TYPE = { ALLOW: 0, DENY: 1, OBJECT_ALLOW: 5, OBJECT_DENY: 6 } as const;
export const ACE_FLAG = { OBJECT_INHERIT: 0x01, CONTAINER_INHERIT: 0x02, NO_PROPAGATE: 0x04, INHERIT_ONLY: 0x08, INHERITED: 0x10 } as const;
export const RIGHT = {
  CREATE_CHILD: 0x1,
  DELETE_CHILD: 0x2,
  READ_PROPERTY: 0x10,
  WRITE_PROPERTY: 0x20,
  CONTROL_ACCESS: 0x100,
  DELETE: 0x10000,
  GENERIC_ALL: 0x10000000,
} as const;

export interface Ace {
  type: number;
  flags: number;
  mask: number;
  /** the attribute, property set, class or extended right the ACE is about */
  objectType?: string;
  /** the class of objects that inherit the ACE */
  inheritedObjectType?: string;
  sid: string;
}

/** The DACL's raw ACEs (each as its bytes) and the descriptor's control word. */
function daclOf(sd: Buffer): { control: number; revision: number; raw: Buffer[] } {
  const control = sd.readUInt16LE(2);
  const daclOffset = sd.readUInt32LE(16);
  if (!daclOffset) return { control, revision: 4, raw: [] };
  const revision = sd[daclOffset];
  const count = sd.readUInt16LE(daclOffset + 4);
  const raw: Buffer[] = [];
  let p = daclOffset + 8;
  for (let i = 0; i < count; i++) {
    const size = sd.readUInt16LE(p + 2);
    raw.push(Buffer.from(sd.subarray(p, p + size)));
    p += size;
  }
  return { control, revision, raw };
}

function parseAce(b: Buffer): Ace | undefined {
  const type = b[0];
  const flags = b[1];
  const mask = b.readUInt32LE(4);
  if (type === ACE_TYPE.OBJECT_ALLOW || type === ACE_TYPE.OBJECT_DENY) {
    const oflags = b.readUInt32LE(8);
    let q = 12;
    let objectType: string | undefined;
    let inheritedObjectType: string | undefined;
    if (oflags & 1) {
      objectType = guidFromBuffer(b.subarray(q, q + 16));
      q += 16;
    }
    if (oflags & 2) {
      inheritedObjectType = guidFromBuffer(b.subarray(q, q + 16));
      q += 16;
    }
    return { type, flags, mask, objectType, inheritedObjectType, sid: sidFromBuffer(b.subarray(q)) };
  }
  if (type === ACE_TYPE.ALLOW || type === ACE_TYPE.DENY) return { type, flags, mask, sid: sidFromBuffer(b.subarray(8)) };
  return undefined; // callback, audit and other ACE types: not ours to read
}

/** The ACEs of a self-relative security descriptor's DACL (allow and deny, plain and object). */
export function daclAces(sd: Buffer): Ace[] {
  return daclOf(sd)
    .raw.map(parseAce)
    .filter((a): a is Ace => !!a);
}

export function sidBytes(sid: string): Buffer {
  const m = /^S-(\d+)-(\d+)((?:-\d+)*)$/.exec(sid);
  if (!m) throw new Error('not a SID');
  const subs = m[3] ? m[3].slice(1).split('-').map(Number) : [];
  const b = Buffer.alloc(8 + subs.length * 4);
  b[0] = Number(m[1]);
  b[1] = subs.length;
  b.writeUIntBE(Number(m[2]), 2, 6);
  subs.forEach((s, i) => b.writeUInt32LE(s >>> 0, 8 + i * 4));
  return b;
}

/** One ACE as bytes ([MS-DTYP] 2.4.4.3 ACCESS_ALLOWED_OBJECT_ACE and friends). */
export function encodeAce(a: Ace): Buffer {
  const sid = sidBytes(a.sid);
  const isObject = a.type === ACE_TYPE.OBJECT_ALLOW || a.type === ACE_TYPE.OBJECT_DENY;
  const parts: Buffer[] = [];
  const head = Buffer.alloc(8);
  head[0] = a.type;
  head[1] = a.flags;
  head.writeUInt32LE(a.mask >>> 0, 4);
  parts.push(head);
  if (isObject) {
    const oflags = Buffer.alloc(4);
    oflags.writeUInt32LE((a.objectType ? 1 : 0) | (a.inheritedObjectType ? 2 : 0), 0);
    parts.push(oflags);
    if (a.objectType) parts.push(guidBytes(a.objectType));
    if (a.inheritedObjectType) parts.push(guidBytes(a.inheritedObjectType));
  }
  parts.push(sid);
  const out = Buffer.concat(parts);
  out.writeUInt16LE(out.length, 2);
  return out;
}

/**
 * A DACL-only self-relative descriptor with `aces` added as explicit ACEs after the existing
 * explicit ones and before the inherited ones (canonical order); ACEs already there (same bytes)
 * are not added twice. The control word (protected, auto-inherited) is kept.
 */
export function withAddedAces(sd: Buffer, aces: Ace[]): Buffer {
  const { control, raw } = daclOf(sd);
  const have = new Set(raw.map((r) => r.toString('hex')));
  const added = aces.map(encodeAce).filter((b) => !have.has(b.toString('hex')) && have.add(b.toString('hex')));
  const firstInherited = raw.findIndex((r) => (r[1] & ACE_FLAG.INHERITED) !== 0);
  const at = firstInherited < 0 ? raw.length : firstInherited;
  const all = [...raw.slice(0, at), ...added, ...raw.slice(at)];
  const body = Buffer.concat(all);
  const acl = Buffer.alloc(8);
  acl[0] = 4; // ACL_REVISION_DS: object ACEs
  acl.writeUInt16LE(8 + body.length, 2);
  acl.writeUInt16LE(all.length, 4);
  const header = Buffer.alloc(20);
  header[0] = 1;
  header.writeUInt16LE(control | 0x8000 | 0x0004, 2); // self-relative, DACL present
  header.writeUInt32LE(20, 16);
  return Buffer.concat([header, acl, body]);
}

const RIGHT_LETTERS: Array<[number, string]> = [
  [0x10000000, 'GA'],
  [0x1, 'CC'],
  [0x2, 'DC'],
  [0x4, 'LC'],
  [0x8, 'SW'],
  [0x10, 'RP'],
  [0x20, 'WP'],
  [0x40, 'DT'],
  [0x80, 'LO'],
  [0x100, 'CR'],
  [0x10000, 'SD'],
  [0x20000, 'RC'],
  [0x40000, 'WD'],
  [0x80000, 'WO'],
];
const FLAG_LETTERS: Array<[number, string]> = [
  [0x2, 'CI'],
  [0x1, 'OI'],
  [0x4, 'NP'],
  [0x8, 'IO'],
  [0x10, 'ID'],
];

/** An ACE in SDDL ([MS-DTYP] 2.5.1), GUIDs as given (callers may substitute names). */
export function aceSddl(a: Ace, names: (guid: string) => string = (g) => g): string {
  const type = { 0: 'A', 1: 'D', 5: 'OA', 6: 'OD' }[a.type] ?? String(a.type);
  const flags = FLAG_LETTERS.filter(([f]) => a.flags & f)
    .map(([, s]) => s)
    .join('');
  const rights = RIGHT_LETTERS.filter(([m]) => (a.mask & m) === m)
    .map(([, s]) => s)
    .join('');
  return `(${type};${flags};${rights};${a.objectType ? names(a.objectType) : ''};${a.inheritedObjectType ? names(a.inheritedObjectType) : ''};${a.sid})`;
}
