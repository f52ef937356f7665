import type { Delegation, Role } from '../../lib/authz/rights';
import { assertLapsRight, lapsRightsModel, renderDelegationScript, writeRightsModel, daclHolds, type ModelRight } from '../../lib/delegation';
import { ACE_FLAG, ACE_TYPE, aceSddl, daclAces, encodeAce, RIGHT, withAddedAces, type Ace } from '../../lib/directory/security-descriptor';
import type { InstanceSettings } from '../../lib/setup/settings';

// The delegation export without a directory: the rights per action (console spec, "Moves, renames
// and groups" and "LAPS directory rights"), the scripts' structure (pwsh is not installable here:
// a structural test and a snapshot), and the security-descriptor codec the status check uses.

const MANAGED = { dn: 'OU=Managed,DC=corp,DC=example,DC=test', guid: '11111111-1111-1111-1111-111111111111' };
const BRANCH = { dn: 'OU=Branch,DC=corp,DC=example,DC=test', guid: '22222222-2222-2222-2222-222222222222' };
const settings = (over: Partial<InstanceSettings> = {}): InstanceSettings => ({
  domain: 'corp.example.test',
  baseDn: 'DC=corp,DC=example,DC=test',
  dcs: [],
  caPem: '',
  readAccount: { user: 'svc-hdc-read@corp.example.test', sealedPassword: '' },
  writeAccount: { user: 'svc-hdc-write@corp.example.test', sealedPassword: '' },
  lapsIdentityUpn: 'svc-laps@corp.example.test',
  managedOus: [MANAGED, BRANCH],
  tierOus: [],
  protectedGroups: [],
  superAdministrators: [],
  stepUpMode: 'authenticator',
  configuredAt: '2026-01-01T00:00:00Z',
  ...over,
});
const roles: Role[] = [
  { id: 'mover', name: 'Mover', permissions: ['users.read', 'users.move', 'users.rename', 'users.rename.login'] },
  { id: 'groups', name: 'Groups', permissions: ['groups.read', 'groups.create', 'groups.delete', 'groups.attributes.write', 'groups.owned.members.write'] },
  { id: 'laps', name: 'LAPS', permissions: ['computers.read', 'computers.laps.read', 'computers.laps.expire'] },
  { id: 'reader', name: 'Reader', permissions: ['computers.read', 'computers.laps.read'] },
];
const delegation = (id: string, roleId: string, scope = [MANAGED]): Delegation => ({ id, roleId, scope, assignees: [] });
const sddl = (rs: ModelRight[]) => rs.map((r) => `${r.inheritance};${r.right};${r.objectType ?? ''};${r.inheritedObjectType ?? ''}`).sort();

describe('write account rights model', () => {
  it('gives each delegable action the spec rights, Delete on the objects and never Delete child', () => {
    const m = writeRightsModel(settings(), roles, [delegation('d1', 'mover'), delegation('d2', 'groups', [BRANCH])]);
    const managed = m.ous.find((o) => o.ou.guid === MANAGED.guid)!;
    expect(managed.permissions).toEqual(['users.move', 'users.rename', 'users.rename.login']);
    expect(sddl(managed.rights)).toEqual(
      [
        'CI;CC;user;', // move: create user objects on destinations
        'CIIO;SD;;user', // move: delete inherited by user objects on sources
        'CIIO;WP;cn;user',
        'CIIO;WP;name;user',
        'CIIO;WP;displayName;user',
        'CIIO;WP;givenName;user',
        'CIIO;WP;sn;user',
        'CIIO;WP;sAMAccountName;user',
        'CIIO;WP;userPrincipalName;user',
      ].sort(),
    );
    const branch = m.ous.find((o) => o.ou.guid === BRANCH.guid)!;
    expect(sddl(branch.rights)).toEqual(['CI;CC;group;', 'CIIO;SD;;group', 'CIIO;WP;description;group', 'CIIO;WP;managedBy;group', 'CIIO;WP;mail;group', 'CIIO;WP;info;group', 'CIIO;WP;member;group'].sort());
    expect(m.identity).toBe('svc-hdc-write@corp.example.test');
    for (const o of m.ous) for (const r of o.rights) expect(r.right).not.toBe('DC' as never);
  });

  it('covers every managed OU with every action when a Super administrator is designated; nothing for read-only roles', () => {
    const m = writeRightsModel(settings({ superAdministrators: ['x'] }), roles, []);
    expect(m.ous.map((o) => o.ou.dn)).toEqual([BRANCH.dn, MANAGED.dn]);
    expect(m.ous[0].permissions).toContain('groups.owned.members.write');
    expect(writeRightsModel(settings(), roles, [delegation('r', 'reader')]).ous).toEqual([]);
  });
});

describe('LAPS account rights model', () => {
  it('grants RP+CR on the password attributes and WP on the expiration times, inherited by computers only', () => {
    const m = lapsRightsModel(settings(), roles, [delegation('l', 'laps'), delegation('r', 'reader', [BRANCH])], { legacySchema: true, otherAccounts: ['svc-hdc-write@corp.example.test'] });
    expect(m.identity).toBe('svc-laps@corp.example.test');
    expect(sddl(m.ous.find((o) => o.ou.guid === MANAGED.guid)!.rights)).toEqual(
      ['CIIO;RPCR;msLAPS-Password;computer', 'CIIO;RPCR;ms-Mcs-AdmPwd;computer', 'CIIO;WP;msLAPS-PasswordExpirationTime;computer', 'CIIO;WP;ms-Mcs-AdmPwdExpirationTime;computer'].sort(),
    );
    expect(sddl(m.ous.find((o) => o.ou.guid === BRANCH.guid)!.rights)).toEqual(['CIIO;RPCR;msLAPS-Password;computer', 'CIIO;RPCR;ms-Mcs-AdmPwd;computer'].sort());
    const windowsOnly = lapsRightsModel(settings(), roles, [delegation('l', 'laps')], { legacySchema: false, otherAccounts: [] });
    expect(sddl(windowsOnly.ous[0].rights)).toEqual(['CIIO;RPCR;msLAPS-Password;computer', 'CIIO;WP;msLAPS-PasswordExpirationTime;computer'].sort());
  });

  it('refuses another account, another class, msLAPS-EncryptedPassword and any other attribute or right', () => {
    const laps = 'svc-laps@corp.example.test';
    const ok: ModelRight = { right: 'RPCR', objectType: 'msLAPS-Password', inheritedObjectType: 'computer', inheritance: 'CIIO' };
    const reason = (f: () => void) => {
      try {
        f();
        return 'accepted';
      } catch (e) {
        return (e as { details?: { reason?: string } }).details?.reason;
      }
    };
    expect(reason(() => assertLapsRight(ok, laps, laps, []))).toBe('accepted');
    expect(reason(() => assertLapsRight(ok, 'svc-hdc-write@corp.example.test', laps, []))).toBe('not_the_laps_account');
    expect(reason(() => assertLapsRight(ok, laps, laps, [laps]))).toBe('technical_account_reused');
    expect(reason(() => assertLapsRight({ ...ok, inheritedObjectType: 'user' }, laps, laps, []))).toBe('computer_objects_only');
    expect(reason(() => assertLapsRight({ ...ok, inheritance: 'CI' }, laps, laps, []))).toBe('computer_objects_only');
    expect(reason(() => assertLapsRight({ ...ok, objectType: 'msLAPS-EncryptedPassword' }, laps, laps, []))).toBe('encrypted_password_never_granted');
    expect(reason(() => assertLapsRight({ ...ok, objectType: 'msLAPS-EncryptedDSRMPassword' }, laps, laps, []))).toBe('attribute_not_allowed');
    expect(reason(() => assertLapsRight({ ...ok, right: 'WP' }, laps, laps, []))).toBe('attribute_not_allowed');
    expect(() => lapsRightsModel(settings({ lapsIdentityUpn: undefined }), roles, [], { legacySchema: false, otherAccounts: [] })).toThrow('laps_identity_upn_missing');
    expect(() => lapsRightsModel(settings({ lapsIdentityUpn: 'svc-hdc-write@corp.example.test' }), roles, [delegation('l', 'laps')], { legacySchema: false, otherAccounts: ['svc-hdc-write@corp.example.test'] })).toThrow('laps_right_refused');
  });
});

describe('delegation scripts (structure; pwsh is not installable here)', () => {
  const opts = { generatedAt: '2026-01-01T00:00:00.000Z', refusedIdentities: ['svc-laps@corp.example.test', 'svc-hdc-read@corp.example.test'] };
  const model = writeRightsModel(settings({ superAdministrators: ['x'] }), roles, []);
  const script = renderDelegationScript(model, opts);

  it('requires -ManagedOu, -Identity and -ModelDigest and checks them against the embedded model before writing', () => {
    expect(script).toMatch(/param\(\s*\n\s*\[Parameter\(Mandatory = \$true\)\]\[string\[\]\]\$ManagedOu,\s*\n\s*\[Parameter\(Mandatory = \$true\)\]\[string\]\$Identity,\s*\n\s*\[Parameter\(Mandatory = \$true\)\]\[ValidatePattern\('\^\[0-9A-Fa-f\]\{64\}\$'\)\]\[string\]\$ModelDigest\s*\n\)/);
    const at = (s: string) => script.indexOf(s);
    expect(at('if ($Identity -ne $Model.identity)')).toBeGreaterThan(0);
    expect(at('Compare-Object -ReferenceObject $exported -DifferenceObject $given')).toBeGreaterThan(0);
    expect(at('holds privileged objects')).toBeGreaterThan(0);
    // every check comes before the first ACL write
    const firstWrite = at('Set-Acl');
    for (const check of ['$embeddedDigest -ne $ModelDigest', '$Model.identity', 'Compare-Object', 'Assert-AllowedRight $r', 'holds privileged objects', '$RefusedIdentities | Where-Object']) expect(at(check)).toBeLessThan(firstWrite);
    expect(script).not.toMatch(/DeleteChild/);
    expect(script).toContain('$RefusedIdentities = @($Model.refusedIdentities)');
  });

  it('embeds the exported model exactly (the JSON between the here-string markers)', () => {
    const json = script.slice(script.indexOf("$ModelText = @'\n") + 16, script.indexOf("\n'@\n"));
    const embedded = JSON.parse(json);
    expect(embedded.identity).toBe(model.identity);
    expect(embedded.refusedIdentities).toEqual(opts.refusedIdentities);
    expect(embedded.ous.map((o: { guid: string }) => o.guid)).toEqual(model.ous.map((o) => o.ou.guid));
    expect(embedded.ous[0].rights.length).toBe(model.ous[0].rights.length);
    // a here-string ends only at a line starting with '@: none inside
    expect(json.split('\n').some((l) => l.startsWith("'@"))).toBe(false);
  });

  it('keeps braces, parentheses and brackets balanced outside strings and comments (a small tokenizer)', () => {
    // strings: '...' ('' escapes), "..." (` escapes), here-strings @'...'@; comments: # to the line end, <# ... #>
    const depth: Record<string, number> = { '{': 0, '(': 0, '[': 0 };
    const close: Record<string, string> = { '}': '{', ')': '(', ']': '[' };
    let i = 0;
    while (i < script.length) {
      const ch = script[i];
      if (script.startsWith("@'\n", i)) i = script.indexOf("\n'@", i) + 3;
      else if (script.startsWith('<#', i)) i = script.indexOf('#>', i) + 2;
      else if (ch === '#') i = script.indexOf('\n', i);
      else if (ch === "'") {
        i++;
        while (!(script[i] === "'" && script[i + 1] !== "'")) i += script[i] === "'" ? 2 : 1;
        i++;
      } else if (ch === '"') {
        i++;
        while (script[i] !== '"') i += script[i] === '`' ? 2 : 1;
        i++;
      } else {
        if (ch in depth) depth[ch]++;
        if (ch in close) {
          depth[close[ch]]--;
          expect(depth[close[ch]]).toBeGreaterThanOrEqual(0);
        }
        i++;
      }
      expect(i).toBeGreaterThan(0);
    }
    expect(depth).toEqual({ '{': 0, '(': 0, '[': 0 });
  });

  it('the LAPS script carries the LAPS allow-list', () => {
    const laps = renderDelegationScript(lapsRightsModel(settings(), roles, [delegation('l', 'laps')], { legacySchema: true, otherAccounts: [] }), {
      ...opts,
      refusedIdentities: ['svc-hdc-read@corp.example.test', 'svc-hdc-write@corp.example.test'],
    });
    expect(laps).toContain("if ($r.objectType -eq 'msLAPS-EncryptedPassword') { throw");
    expect(laps).toContain("if ($r.inheritedObjectType -ne 'computer'");
    expect(laps).toMatchSnapshot('laps script');
  });

  it('matches the snapshot', () => {
    expect(script).toMatchSnapshot('write script');
  });
});

describe('security descriptor codec', () => {
  const sid = 'S-1-5-21-1-2-3-1105';
  const ace: Ace = { type: ACE_TYPE.OBJECT_ALLOW, flags: ACE_FLAG.CONTAINER_INHERIT | ACE_FLAG.INHERIT_ONLY, mask: RIGHT.WRITE_PROPERTY, objectType: 'bf96793f-0de6-11d0-a285-00aa003049e2', inheritedObjectType: 'bf967aba-0de6-11d0-a285-00aa003049e2', sid };
  const empty = withAddedAces(Buffer.from('0100048014000000000000000000000000000000', 'hex').subarray(0, 20), []);

  it('round-trips object ACEs and adds each once, before inherited ones', () => {
    const inherited: Ace = { type: ACE_TYPE.ALLOW, flags: ACE_FLAG.INHERITED, mask: RIGHT.READ_PROPERTY, sid: 'S-1-5-11' };
    const sd = withAddedAces(withAddedAces(empty, [inherited]), [ace, ace, { ...ace, type: ACE_TYPE.OBJECT_ALLOW, objectType: undefined, mask: RIGHT.DELETE }]);
    const aces = daclAces(sd);
    expect(aces.map((a) => aceSddl(a))).toEqual([
      `(OA;CIIO;WP;bf96793f-0de6-11d0-a285-00aa003049e2;bf967aba-0de6-11d0-a285-00aa003049e2;${sid})`,
      `(OA;CIIO;SD;;bf967aba-0de6-11d0-a285-00aa003049e2;${sid})`,
      '(A;ID;RP;;;S-1-5-11)',
    ]);
    expect(daclAces(withAddedAces(sd, [ace])).length).toBe(3);
    expect(encodeAce(ace).readUInt16LE(2)).toBe(encodeAce(ace).length);
  });

  it('a right inherited from a parent OU counts; another SID, mask or class does not', () => {
    const onChild = { ...ace, flags: ace.flags | ACE_FLAG.INHERITED };
    expect(daclHolds([onChild], ace)).toBe(true);
    expect(daclHolds([{ ...ace, sid: 'S-1-5-21-1-2-3-9999' }], ace)).toBe(false);
    expect(daclHolds([{ ...ace, mask: RIGHT.READ_PROPERTY }], ace)).toBe(false);
    expect(daclHolds([{ ...ace, inheritedObjectType: undefined }], ace)).toBe(false);
    expect(daclHolds([{ ...ace, flags: ACE_FLAG.CONTAINER_INHERIT }], ace)).toBe(false);
    expect(daclHolds([{ ...ace, type: ACE_TYPE.OBJECT_DENY }], ace)).toBe(false);
  });
});
