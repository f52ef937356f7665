import { parseURL as platform } from '../../lib/shims/whatwg-url';
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { parseURL: whatwg } = require('whatwg-url');

// Bundles alias whatwg-url to the shim (esbuild.config.cjs): for what ldapts reads of a DC's URL
// (scheme, host, port) it must answer as whatwg-url does.
describe('whatwg-url shim', () => {
  it.each([
    'ldaps://dc1.corp.example.test',
    'ldaps://dc1.corp.example.test:636',
    'ldaps://127.0.0.2:636',
    'ldap://DC1.Corp.Example.Test:389',
    'ldaps://user:pw@dc1.corp.example.test:636/',
  ])('reads %s like whatwg-url', (url) => {
    const a = whatwg(url);
    const b = platform(url)!;
    expect({ scheme: b.scheme, host: b.host, port: b.port }).toEqual({ scheme: a.scheme, host: a.host, port: a.port });
  });
  it('fails like whatwg-url on what is not a URL', () => {
    expect(platform('not a url')).toBeNull();
    expect(whatwg('not a url')).toBeNull();
  });
});
