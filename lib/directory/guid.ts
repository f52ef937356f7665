// objectGUID is 16 bytes; its string form has the first three groups little-endian.
export function guidFromBuffer(b: Buffer): string {
  if (b.length !== 16) throw new Error('objectGUID must be 16 bytes');
  const h = b.toString('hex');
  const le = (s: string) => s.match(/../g)!.reverse().join('');
  return `${le(h.slice(0, 8))}-${le(h.slice(8, 12))}-${le(h.slice(12, 16))}-${h.slice(16, 20)}-${h.slice(20)}`;
}

const GUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isGuid = (s: string) => GUID_RE.test(s);

/** The 16 bytes of an objectGUID as the directory stores them (first three groups little-endian). */
export function guidBytes(guid: string): Buffer {
  if (!isGuid(guid)) throw new Error('not a GUID');
  const h = guid.replace(/-/g, '').toLowerCase();
  const le = (s: string) => s.match(/../g)!.reverse().join('');
  return Buffer.from(le(h.slice(0, 8)) + le(h.slice(8, 12)) + le(h.slice(12, 16)) + h.slice(16), 'hex');
}

/** objectSid (binary) to S-1-5-... */
export function sidFromBuffer(b: Buffer): string {
  const revision = b[0];
  const count = b[1];
  const authority = b.readUIntBE(2, 6);
  const subs: number[] = [];
  for (let i = 0; i < count; i++) subs.push(b.readUInt32LE(8 + i * 4));
  return `S-${revision}-${authority}${subs.map((s) => `-${s}`).join('')}`;
}

/** Escape a value for use inside an LDAP filter (RFC 4515). */
export function escapeFilterValue(s: string): string {
  return s.replace(/[\\*()\0]/g, (c) => `\\${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}
