import fc from 'fast-check';
import { encodedHeaderText, ntfyHeaders, renderChannelRequest } from '../../lib/channels/render';

// Issue 25, finding 6: ntfy titles with non-ASCII text were sent as `?` ("Zürich" became
// "Z?rich"). They are now RFC 2047 encoded words, which ntfy decodes; read back by a decoder
// written here from RFC 2047 (B encoding; whitespace between adjacent encoded words is dropped).

function decodeRfc2047(value: string): string {
  const word = /=\?([^?]+)\?([BbQq])\?([^?]*)\?=/y;
  let out = '';
  let pendingSpace = '';
  let lastWasWord = false;
  let i = 0;
  while (i < value.length) {
    word.lastIndex = i;
    const m = word.exec(value);
    if (m) {
      expect(m[1].toUpperCase()).toBe('UTF-8');
      expect(m[2].toUpperCase()).toBe('B');
      expect(m[0].length).toBeLessThanOrEqual(75); // RFC 2047 section 2
      if (!lastWasWord) out += pendingSpace;
      out += Buffer.from(m[3], 'base64').toString('utf8');
      pendingSpace = '';
      lastWasWord = true;
      i = word.lastIndex;
    } else if (value[i] === ' ') {
      pendingSpace += ' ';
      i++;
    } else {
      out += pendingSpace + value[i];
      pendingSpace = '';
      lastWasWord = false;
      i++;
    }
  }
  return out + pendingSpace;
}

describe('ntfy titles are RFC 2047 encoded words', () => {
  it('Zürich round-trips (was "Z?rich")', () => {
    const events = [{ event: 'fired', severity: 'warning' as const, text: 'Console hdc.zuerich.test: domain controller Zürich is down' }];
    const h = renderChannelRequest({ type: 'ntfy', url: 'https://ntfy.example.test', topic: 'ops' }, events, {}, 'fleet').headers;
    expect(h.title).toMatch(/^=\?UTF-8\?B\?/);
    expect(h.title).not.toContain('?rich');
    expect(h.title).toMatch(/^[\x20-\x7e]+$/); // a header value Node sends as it is
    expect(decodeRfc2047(h.title)).toBe('[fleet] Console hdc.zuerich.test: domain controller Zürich is down');
  });

  it('ASCII titles stay as they are', () => {
    expect(ntfyHeaders('[fleet] 2 fired', [], undefined).title).toBe('[fleet] 2 fired');
  });

  it('any title: one header line of printable ASCII that decodes to the title (line breaks as spaces), words split between characters (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (title) => {
        const v = encodedHeaderText(title);
        expect(v).toMatch(/^[\x20-\x7e]*$/);
        const expected = Array.from(title.replace(/[\p{Cc}\p{Zl}\p{Zp}]/gu, ' ')).slice(0, 250).join('');
        expect(decodeRfc2047(v)).toBe(expected);
      }),
      { numRuns: 500 },
    );
  });
});
