import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../lib/config';

describe('configuration loader', () => {
  it('has exactly the spec defaults with no input', () => {
    const { config, warnings } = loadConfig({});
    expect(warnings).toEqual([]);
    expect(config.Directory).toMatchObject({ FailedDcCooldown: 60, HealthProbeInterval: 30, PageSize: 500, SearchMaxResults: 5000, MaxResults: 200 });
    expect(config.PasswordService).toMatchObject({ MaxLapsReadsPerTarget: 5, RateWindow: 600 });
    expect(config.Approvals.CheckInterval).toBe(300);
    expect(config.Audit.RetentionDays).toBe(0);
    expect(config.Authentication.Access).toEqual({ StepUp: 'Session', AdAccountClaims: 'username,trait:windows_logins', Header: 'teleport-jwt-assertion', SuperAdministratorsRequireRoleMapping: false });
    expect(config.Authentication.ActiveDirectory.Enabled).toBe(true);
    expect(config.Database.AutoMigrate).toBe(true);
  });

  it('takes Section__Key and HDC_ variables from the environment', () => {
    const { config } = loadConfig({
      Directory__PageSize: '100',
      HDC_Authentication__Access__StepUp: 'Deny',
      HDC_LAPS_UPN: 'svc-laps@corp.example.test',
      HDC_LAPS_PASSWORD_FILE: '/run/secrets/laps',
      Directory__FailedDcCooldown: '00:02:00',
    });
    expect(config.Directory.PageSize).toBe(100);
    expect(config.Directory.FailedDcCooldown).toBe(120);
    expect(config.Authentication.Access.StepUp).toBe('Deny');
    expect(config.PasswordService.LapsIdentity).toEqual({ Upn: 'svc-laps@corp.example.test', PasswordFile: '/run/secrets/laps' });
  });

  it('reports obsolete and inert keys by name as warnings and ignores them', () => {
    const { warnings } = loadConfig({
      Authentication__Teleport__TrustSessionMfa: 'true',
      Authentication__Teleport__StepUpMaxAge: '300',
      Directory__UseStartTls: 'true',
    });
    expect(warnings).toEqual(
      expect.arrayContaining([
        expect.stringContaining('obsolete configuration key Authentication:Teleport:TrustSessionMfa'),
        expect.stringContaining('obsolete configuration key Authentication:Teleport:StepUpMaxAge'),
        expect.stringContaining('Directory:UseStartTls no longer does anything'),
      ]),
    );
  });

  it('reads a JSON config file, the environment winning', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'hdc-')), 'hdc.json');
    fs.writeFileSync(file, JSON.stringify({ Directory: { PageSize: 250, MaxResults: 50 }, Typo: { Key: 1 } }));
    const { config, warnings } = loadConfig({ HDC_CONFIG_FILE: file, Directory__PageSize: '300' });
    expect(config.Directory.PageSize).toBe(300);
    expect(config.Directory.MaxResults).toBe(50);
    expect(warnings).toContain('unknown configuration key Typo:Key is ignored');
  });

  it.each([['1'], ['29']])('refuses Audit:RetentionDays=%s (0 or at least 30)', (v) => {
    expect(() => loadConfig({ Audit__RetentionDays: v })).toThrow(ConfigError);
    try {
      loadConfig({ Audit__RetentionDays: v });
    } catch (e) {
      expect((e as Error).message).toContain('Audit:RetentionDays');
    }
  });

  it.each([['0', 0], ['30', 30], ['365', 365]])('accepts Audit:RetentionDays=%s', (v, n) => {
    expect(loadConfig({ Audit__RetentionDays: v }).config.Audit.RetentionDays).toBe(n);
  });

  it('fails with a clear message naming the key on a bad value', () => {
    expect(() => loadConfig({ Authentication__Access__StepUp: 'Maybe' })).toThrow(/Authentication:Access:StepUp/);
    expect(() => loadConfig({ Directory__PageSize: 'lots' })).toThrow(/Directory:PageSize/);
  });
});

describe('Authentication:Access keys', () => {
  it('takes a JWKS URL, issuer, audience and header; refuses an AdAccountClaims entry it does not know, naming the key', () => {
    const { config } = loadConfig({
      Authentication__Access__JwksUrl: 'https://teleport.example.test/.well-known/jwks.json',
      Authentication__Access__Issuer: 'cluster',
      Authentication__Access__Audience: 'https://hdc.example.test',
      Authentication__Access__Header: 'X-Platform-Jwt',
      Authentication__Access__AdAccountClaims: 'trait:windows_logins, username',
    });
    expect(config.Authentication.Access).toMatchObject({ JwksUrl: 'https://teleport.example.test/.well-known/jwks.json', Issuer: 'cluster', Audience: 'https://hdc.example.test', Header: 'x-platform-jwt' });
    expect(() => loadConfig({ Authentication__Access__AdAccountClaims: 'username,email' })).toThrow(/Authentication:Access:AdAccountClaims/);
    expect(() => loadConfig({ Authentication__Access__JwksUrl: 'not a url' })).toThrow(/Authentication:Access:JwksUrl/);
  });

  it('Database:BackupFolder is optional; AutoMigrate=false is read', () => {
    expect(loadConfig({}).config.Database).toEqual({ AutoMigrate: true });
    expect(loadConfig({ Database__AutoMigrate: 'false', Database__BackupFolder: '/var/lib/hdc/backups' }).config.Database).toEqual({ AutoMigrate: false, BackupFolder: '/var/lib/hdc/backups' });
  });
});
