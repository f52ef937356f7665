import { createHash } from 'node:crypto';
import type { Delegation, Role } from '../../lib/authz/rights';
import { lapsRightsModel, modelDigest, renderDelegationScript, scriptCommand, writeRightsModel } from '../../lib/delegation';
import type { InstanceSettings } from '../../lib/setup/settings';

// Issue 25, finding 5: the exported `hdc-laps-rights.ps1` trusted its own embedded model: anyone
// who edited the model's identity, and passed the same -Identity, got LAPS read rights granted
// to any account. Now the console shows the SHA-256 of the embedded model, -ModelDigest is
// mandatory, and the script compares the two before it reads anything from the model.
// Debian has no PowerShell: the digest is computed here the way the script computes it (the
// here-string's text, CR removed, as UTF-8), and the script's text is checked to hold that
// computation and the refusal before any read of the model, any directory call and any grant.

const MANAGED = { dn: 'OU=Managed,DC=corp,DC=example,DC=test', guid: '11111111-1111-1111-1111-111111111111' };
const settings = (over: Partial<InstanceSettings> = {}): InstanceSettings => ({
  domain: 'corp.example.test',
  baseDn: 'DC=corp,DC=example,DC=test',
  dcs: [],
  caPem: '',
  readAccount: { user: 'svc-hdc-read@corp.example.test', sealedPassword: '' },
  writeAccount: { user: 'svc-hdc-write@corp.example.test', sealedPassword: '' },
  lapsIdentityUpn: 'svc-laps@corp.example.test',
  managedOus: [MANAGED],
  tierOus: [],
  protectedGroups: [],
  superAdministrators: [],
  stepUpMode: 'authenticator',
  configuredAt: '2026-01-01T00:00:00Z',
  ...over,
});
const roles: Role[] = [{ id: 'laps', name: 'LAPS', permissions: ['computers.read', 'computers.laps.read', 'computers.laps.expire'] }];
const delegations: Delegation[] = [{ id: 'l', roleId: 'laps', scope: [MANAGED], assignees: [] }];
const refused = ['svc-hdc-read@corp.example.test', 'svc-hdc-write@corp.example.test'];
const lapsModel = (over: Partial<InstanceSettings> = {}) => lapsRightsModel(settings(over), roles, delegations, { legacySchema: true, otherAccounts: [] });

const START = "$ModelText = @'\n";
/** What PowerShell's here-string holds: the lines between `@'` and `'@`, without the last line end. */
function hereString(script: string): string {
  const s = script.replace(/\r\n/g, '\n');
  const from = s.indexOf(START) + START.length;
  return s.slice(from, s.indexOf("\n'@\n", from));
}
/** The script's own computation: SHA256 over UTF8.GetBytes($ModelText -replace "`r", ''), as lowercase hex. */
const psDigest = (modelText: string) => createHash('sha256').update(Buffer.from(modelText.replace(/\r/g, ''), 'utf8')).digest('hex');

const PS_DIGEST_LINE = "$embeddedDigest = -join ($sha256.ComputeHash([System.Text.Encoding]::UTF8.GetBytes(($ModelText -replace \"`r\", ''))) | ForEach-Object { $_.ToString('x2') })";
const PS_REFUSAL = 'if ($embeddedDigest -ne $ModelDigest.ToLowerInvariant()) { throw ';

describe('the LAPS rights script grants only to the model the console exported (issue 25, finding 5)', () => {
  const model = lapsModel();
  const script = renderDelegationScript(model, { generatedAt: '2026-01-01T00:00:00.000Z', refusedIdentities: refused });
  const digest = modelDigest(model, refused);

  it('the digest the console shows is the one the script computes over its embedded model', () => {
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    expect(psDigest(hereString(script))).toBe(digest);
    // a copy saved with CRLF line ends (a Windows editor, git autocrlf) still matches
    expect(psDigest(hereString(script.replace(/\n/g, '\r\n')))).toBe(digest);
    // one model, one digest: the time of the export is not part of it (the JSON answer and the download agree)
    expect(modelDigest(model, refused)).toBe(digest);
    expect(psDigest(hereString(renderDelegationScript(model, { generatedAt: '2027-05-05T00:00:00.000Z', refusedIdentities: refused })))).toBe(digest);
    expect(scriptCommand(model, digest)).toBe(`.\\hdc-laps-rights.ps1 -ManagedOu '${MANAGED.dn}' -Identity 'svc-laps@corp.example.test' -ModelDigest ${digest}`);
  });

  it('an edited model (the identity, a refused account, a right, an OU) no longer matches: the script refuses it', () => {
    const text = hereString(script);
    const edits = [
      text.replace('"identity": "svc-laps@corp.example.test"', '"identity": "attacker@corp.example.test"'),
      text.replace('"svc-hdc-write@corp.example.test"', '"nobody@corp.example.test"'),
      text.replace('"msLAPS-PasswordExpirationTime"', '"msLAPS-EncryptedPassword"'),
      text.replace(MANAGED.guid, '99999999-9999-9999-9999-999999999999'),
      `${text} `,
    ];
    for (const edited of edits) {
      expect(edited).not.toBe(text);
      expect(psDigest(edited)).not.toBe(digest); // -ModelDigest <console's digest> meets another digest: the throw below
    }
    // the attack of the finding: the model's identity edited, the same -Identity passed
    const attacked = script.replace('"identity": "svc-laps@corp.example.test"', '"identity": "attacker@corp.example.test"');
    expect(attacked).toContain("if ($Identity -ne $Model.identity)"); // the old check would pass with -Identity attacker@...
    expect(psDigest(hereString(attacked))).not.toBe(digest);
    // the digest of another model (what an attacker could compute) is not what the console showed
    const other = lapsModel({ lapsIdentityUpn: 'attacker@corp.example.test' });
    expect(modelDigest(other, refused)).not.toBe(digest);
  });

  it('-ModelDigest is mandatory, and the comparison comes before the model is read and before any directory call or grant', () => {
    expect(script).toContain("[Parameter(Mandatory = $true)][ValidatePattern('^[0-9A-Fa-f]{64}$')][string]$ModelDigest");
    expect(script).toContain(PS_DIGEST_LINE);
    expect(script).toContain(PS_REFUSAL);
    const at = (s: string) => {
      const i = script.indexOf(s);
      expect(i).toBeGreaterThan(0);
      return i;
    };
    const refusal = at(PS_REFUSAL);
    expect(at(PS_DIGEST_LINE)).toBeLessThan(refusal);
    expect(at("'@\n$sha256")).toBeLessThan(at(PS_DIGEST_LINE)); // the here-string ends right before the computation
    for (const later of ['ConvertFrom-Json', '$Model.identity', 'Import-Module ActiveDirectory\n', 'Get-ADUser', 'Get-ADOrganizationalUnit', 'Assert-AllowedRight $r', 'AddAccessRule', 'Set-Acl']) expect(at(later)).toBeGreaterThan(refusal);
    // $Model is only ever the parsed, digest-checked text; the refused accounts come from it
    expect(script.match(/\$Model = /g)).toEqual(['$Model = ']);
    expect(script).toContain('$Model = $ModelText | ConvertFrom-Json');
    expect(script).toContain('$RefusedIdentities = @($Model.refusedIdentities)');
    expect(JSON.parse(hereString(script)).refusedIdentities).toEqual(refused);
  });

  it('the script is pure ASCII whatever the names hold (PowerShell 5.1 reads a file without BOM in the ANSI code page)', () => {
    const ou = { dn: "OU=Zürich ‘x’ #> $(y),DC=corp,DC=example,DC=test", guid: '33333333-3333-3333-3333-333333333333' };
    const m = lapsRightsModel(settings({ managedOus: [ou], lapsIdentityUpn: 'svc-läps@corp.example.test' }), roles, [{ id: 'l', roleId: 'laps', scope: [ou], assignees: [] }], { legacySchema: false, otherAccounts: [] });
    const s = renderDelegationScript(m, { generatedAt: '2026-01-01T00:00:00.000Z', refusedIdentities: refused });
    expect(s).toMatch(/^[\x09\x0a\x0d\x20-\x7e]*$/);
    const embedded = JSON.parse(hereString(s));
    expect(embedded.identity).toBe('svc-läps@corp.example.test');
    expect(embedded.ous[0].dn).toBe(ou.dn);
    expect(psDigest(hereString(s))).toBe(modelDigest(m, refused));
    // the block comment of the header cannot be ended by a name
    expect(s.indexOf('#>')).toBe(s.indexOf('#>\n[CmdletBinding'));
  });

  it('the write script carries the same binding', () => {
    const w = writeRightsModel(settings({ superAdministrators: ['x'] }), [], []);
    const ws = renderDelegationScript(w, { generatedAt: '2026-01-01T00:00:00.000Z', refusedIdentities: ['svc-laps@corp.example.test'] });
    expect(ws).toContain(PS_REFUSAL);
    expect(psDigest(hereString(ws))).toBe(modelDigest(w, ['svc-laps@corp.example.test']));
  });
});
