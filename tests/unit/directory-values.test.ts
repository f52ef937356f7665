import { escapeFilterValue, guidBytes, guidFromBuffer, sidFromBuffer } from '../../lib/directory/guid';

describe('directory value encoding', () => {
  it('formats objectGUID with the first three groups little-endian and back to a filter', () => {
    const b = Buffer.from('33221100554477668899aabbccddeeff', 'hex');
    const guid = guidFromBuffer(b);
    expect(guid).toBe('00112233-4455-6677-8899-aabbccddeeff');
    expect(guidBytes(guid).toString('hex')).toBe('33221100554477668899aabbccddeeff');
  });
  it('refuses a non-GUID in a filter', () => {
    expect(() => guidBytes('*)(objectClass=*')).toThrow();
  });
  it('formats a SID', () => {
    // S-1-5-21-1-2-3-512
    const b = Buffer.alloc(8 + 5 * 4);
    b[0] = 1;
    b[1] = 5;
    b.writeUIntBE(5, 2, 6);
    [21, 1, 2, 3, 512].forEach((v, i) => b.writeUInt32LE(v, 8 + i * 4));
    expect(sidFromBuffer(b)).toBe('S-1-5-21-1-2-3-512');
  });
  it('escapes filter metacharacters (RFC 4515)', () => {
    expect(escapeFilterValue('a*b(c)\\d\0')).toBe('a\\2ab\\28c\\29\\5cd\\00');
  });
});
