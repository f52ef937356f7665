import { createLocalJWKSet, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { randomBytes } from 'node:crypto';
import { clientRoleCodes, platformSignIn } from '../../../lib/fleet/access';
import { FleetConfigError, loadFleetConfig } from '../../../lib/fleet/config';
import { isLocalToken, signLocalToken, verifyLocalToken, verifyPlatformToken, type JwksResolver } from '../../../lib/fleet/jwt';
import { hashPassword, passwordProblem, verifyPassword } from '../../../lib/fleet/password';

describe('fleet configuration', () => {
  it('has the spec defaults', () => {
    const c = loadFleetConfig({});
    expect(c).toMatchObject({ ACCESS_JWT_ADMIN_ROLES: [], ACCESS_JWT_ALLOWED_ROLES: [], ACCESS_JWT_CLIENT_ROLES: true, ACCESS_JWT_CLIENT_ROLE_LEVEL: 'viewer', ACCESS_JWT_HEADER: 'teleport-jwt-assertion' });
  });
  it('reads lists, booleans and levels; empty values count as unset', () => {
    const c = loadFleetConfig({ ACCESS_JWT_ADMIN_ROLES: ' msp-admin, ops ,', ACCESS_JWT_CLIENT_ROLES: 'false', ACCESS_JWT_CLIENT_ROLE_LEVEL: 'operator', ACCESS_IDENTITY_FILE: '', ACCESS_JWT_JWKS_URL: '' });
    expect(c.ACCESS_JWT_ADMIN_ROLES).toEqual(['msp-admin', 'ops']);
    expect(c.ACCESS_JWT_CLIENT_ROLES).toBe(false);
    expect(c.ACCESS_JWT_CLIENT_ROLE_LEVEL).toBe('operator');
    expect(c.ACCESS_IDENTITY_FILE).toBeUndefined();
  });
  it.each([
    [{ ACCESS_JWT_CLIENT_ROLE_LEVEL: 'admin' }, 'ACCESS_JWT_CLIENT_ROLE_LEVEL'],
    [{ ACCESS_JWT_CLIENT_ROLES: 'maybe' }, 'ACCESS_JWT_CLIENT_ROLES'],
    [{ ACCESS_IDENTITY_FILE: '/a', ACCESS_MACHINE_ID_IDENTITY: '/b', ACCESS_AUTH_SERVER: 'x:443' }, 'ACCESS_MACHINE_ID_IDENTITY'],
    [{ ACCESS_IDENTITY_FILE: '/a' }, 'ACCESS_AUTH_SERVER'],
    [{ ACCESS_JWT_JWKS_URL: 'not a url' }, 'ACCESS_JWT_JWKS_URL'],
  ])('refuses %j naming %s', (env, name) => {
    try {
      loadFleetConfig(env as NodeJS.ProcessEnv);
      throw new Error('accepted');
    } catch (e) {
      expect(e).toBeInstanceOf(FleetConfigError);
      expect((e as FleetConfigError).problems.join('\n')).toContain(name);
    }
  });
});

describe('who may sign in through the access platform', () => {
  const cfg = loadFleetConfig({ ACCESS_JWT_ADMIN_ROLES: 'msp-admin', ACCESS_JWT_ALLOWED_ROLES: 'msp-admin,technician', ACCESS_JWT_ALLOWED_USERS: 'breakglass' });
  it.each([
    ['alice', ['msp-admin'], { admin: true }],
    ['breakglass', [], { admin: true }],
    ['bob', ['technician'], { admin: false }],
    ['carol', ['fleet-client-acme'], { admin: false }], // a convention role alone signs in as a technician
    ['dave', ['fleet-client-Acme'], undefined], // invalid code
    ['erin', ['fleet-client-'], undefined],
    ['frank', ['access', 'editor'], undefined],
    ['Breakglass', [], undefined], // user names are exact
  ])('%s with %j', (user, roles, expected) => expect(platformSignIn(cfg, user, roles)).toEqual(expected));
  it('a convention role never makes an administrator, and is ignored when the convention is off', () => {
    const off = loadFleetConfig({ ACCESS_JWT_CLIENT_ROLES: 'false', ACCESS_JWT_ALLOWED_ROLES: 'technician' });
    expect(platformSignIn(off, 'carol', ['fleet-client-acme'])).toBeUndefined();
    expect(platformSignIn(cfg, 'carol', ['fleet-client-acme', 'fleet-client-globex'])).toEqual({ admin: false });
    expect(clientRoleCodes(['fleet-client-acme', 'fleet-client-Bad', 'fleet-client-a-b-1', 'other'])).toEqual(['acme', 'a-b-1']);
  });
});

describe('tokens', () => {
  it('issues local administrator tokens that only the master key verifies', async () => {
    const key = randomBytes(32);
    const { token } = await signLocalToken(key, 'admin', 3, 60);
    expect(isLocalToken(token)).toBe(true);
    await expect(verifyLocalToken(key, token)).resolves.toEqual({ username: 'admin', epoch: 3 });
    await expect(verifyLocalToken(randomBytes(32), token)).rejects.toThrow();
  });
  it('verifies platform tokens against the JWKS, with issuer and audience, and refuses an HMAC token', async () => {
    const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
    const jwks = createLocalJWKSet({ keys: [{ ...(await exportJWK(publicKey)), alg: 'RS256', kid: 'k' }] }) as unknown as JwksResolver;
    const sign = (claims: Record<string, unknown>, iss = 'cluster', aud = 'https://fleet') =>
      new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'k' }).setIssuer(iss).setAudience(aud).setSubject('alice').setIssuedAt().setExpirationTime('5m').sign(privateKey);
    await expect(verifyPlatformToken(await sign({ username: 'alice', roles: ['a', 1] }), jwks, { issuer: 'cluster', audience: 'https://fleet' })).resolves.toEqual({ username: 'alice', roles: ['a'], traits: {} });
    await expect(verifyPlatformToken(await sign({ roles: [] }, 'other'), jwks, { issuer: 'cluster' })).rejects.toThrow();
    await expect(verifyPlatformToken(await sign({ roles: [] }, 'cluster', 'https://elsewhere'), jwks, { audience: 'https://fleet' })).rejects.toThrow();
    const { token } = await signLocalToken(randomBytes(32), 'admin', 1, 60);
    await expect(verifyPlatformToken(token, jwks, {})).rejects.toThrow();
  });
});

describe('local administrator password', () => {
  it('hashes with scrypt, salted, and verifies', async () => {
    const a = await hashPassword('correct horse battery');
    const b = await hashPassword('correct horse battery');
    expect(a).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(a).not.toBe(b);
    expect(a).not.toContain('correct');
    await expect(verifyPassword('correct horse battery', a)).resolves.toBe(true);
    await expect(verifyPassword('correct horse batterY', a)).resolves.toBe(false);
    await expect(verifyPassword('x', 'bcrypt$whatever')).resolves.toBe(false);
  });
  it('asks for a long password', () => {
    expect(passwordProblem('short')).toBeDefined();
    expect(passwordProblem('twelve chars')).toBeUndefined();
  });
});
