import { relativeDn } from '../../lib/authz/baseline';
import { csvCell, csvOf } from '../../lib/users/exports';
import { brandingInputSchema } from '../../lib/setup/branding';

describe('CSV cells', () => {
  it('quotes every cell and doubles quotes (RFC 4180)', () => {
    expect(csvCell('plain')).toBe('"plain"');
    expect(csvCell('say "hi", then go')).toBe('"say ""hi"", then go"');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    expect(csvCell(null)).toBe('""');
    expect(csvCell(true)).toBe('"true"');
  });

  it('turns anything a spreadsheet would run as a formula into text (leading quote)', () => {
    for (const v of ['=1+1', '+1', '-2+3', '@SUM(A1)', '\t=cmd', '\r=cmd', '=HYPERLINK("http://x","y")']) {
      const cell = csvCell(v);
      expect(cell.startsWith(`"'`)).toBe(true);
    }
    expect(csvCell('a=1')).toBe('"a=1"');
    expect(csvOf(['a', 'b'], [['=x', 'y']])).toBe('"a","b"\r\n"\'=x","y"\r\n');
  });
});

describe('baseline OU paths', () => {
  it('are relative to the domain root; anything outside it stays as written', () => {
    expect(relativeDn('OU=Branch,OU=Managed,DC=hdc,DC=test', 'DC=hdc,DC=test')).toBe('OU=Branch,OU=Managed');
    expect(relativeDn('OU=x,DC=other,DC=test', 'DC=hdc,DC=test')).toBe('OU=x,DC=other,DC=test');
  });
});

describe('branding input', () => {
  const ok = (title: string) => brandingInputSchema.safeParse({ title, accentColour: '#AbCdEf' }).success;
  it('takes 1 to 60 plain characters (code points), trimmed, and a #rrggbb colour stored lower-case', () => {
    expect(brandingInputSchema.parse({ title: ' Acme ', accentColour: '#AbCdEf' })).toEqual({ title: 'Acme', accentColour: '#abcdef', showOnSignIn: false });
    expect(ok('x'.repeat(60))).toBe(true);
    expect(ok('\u{1F680}'.repeat(60))).toBe(true);
    for (const bad of ['', '  ', 'x'.repeat(61), 'a\u202Eb', 'a\nb', 'a\u200Bb', 'a\u2028b', 'a\u0000b']) expect([bad, ok(bad)]).toEqual([bad, false]);
    expect(brandingInputSchema.safeParse({ title: 'x', accentColour: 'red' }).success).toBe(false);
  });
});
