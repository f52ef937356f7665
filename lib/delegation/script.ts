import { rightKey, type ModelRight, type RightsModel } from './model';

// The delegation export as the PowerShell script a domain administrator runs (console spec,
// Versioning 4): `-ManagedOu` and `-Identity` must match the exported model, OUs holding
// privileged objects are refused, and every right passes an allow-list in the script itself
// before any ACL is written (Delete only on the objects, never Delete child; LAPS: only the
// clear-text password attributes and expiration times, on computer objects, for the LAPS account).

// Builtin groups and domain RIDs whose members are privileged (lib/authz/classify.ts, the same list).
const BUILTIN_PRIVILEGED = ['S-1-5-32-544', 'S-1-5-32-548', 'S-1-5-32-549', 'S-1-5-32-550', 'S-1-5-32-551', 'S-1-5-32-552', 'S-1-5-32-569'];
const DOMAIN_PRIVILEGED_RIDS = [498, 512, 516, 517, 518, 519, 520, 521, 526, 527];

const RIGHTS_PS: Record<ModelRight['right'], string> = { CC: 'CreateChild', SD: 'Delete', WP: 'WriteProperty', RPCR: 'ReadProperty, ExtendedRight' };
const INHERITANCE_PS: Record<ModelRight['inheritance'], string> = { CI: 'All', CIIO: 'Descendents' };

/** The rights in SDDL with names, as the script's comments and the export's preview show them. */
export const rightSddl = (r: ModelRight, who = '<Identity>') => `(OA;${r.inheritance};${r.right};${r.objectType ?? ''};${r.inheritedObjectType ?? ''};${who})`;

export interface ScriptOptions {
  /** UTC time written in the header (tests pass a fixed one) */
  generatedAt: string;
  /** accounts that may never receive these rights (the LAPS account for the write script; the read, write and reset accounts for the LAPS script) */
  refusedIdentities: string[];
  /** the product's version, for the header */
  version?: string;
}

const psString = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** The model as the JSON the script embeds (a single-quoted here-string: nothing in it is expanded). */
function modelJson(model: RightsModel) {
  return JSON.stringify(
    {
      kind: model.kind,
      identity: model.identity,
      ous: model.ous.map((o) => ({
        dn: o.ou.dn,
        guid: o.ou.guid,
        permissions: o.permissions,
        rights: o.rights.map((r) => ({ right: r.right, objectType: r.objectType ?? null, inheritedObjectType: r.inheritedObjectType ?? null, inheritance: r.inheritance })),
      })),
    },
    null,
    2,
  );
}

const WRITE_GUARD = `function Assert-AllowedRight($r) {
  # the write account's rights: create user/group objects, delete user/group objects (never
  # Delete child on the OU), write the listed attributes of users and groups
  $ok = switch ($r.right) {
    'CC' { $r.inheritance -eq 'CI' -and $r.objectType -in @('user', 'group') -and -not $r.inheritedObjectType }
    'SD' { $r.inheritance -eq 'CIIO' -and $r.inheritedObjectType -in @('user', 'group') -and -not $r.objectType }
    'WP' { $r.inheritance -eq 'CIIO' -and (
             ($r.inheritedObjectType -eq 'user' -and $r.objectType -in @('cn', 'name', 'displayName', 'givenName', 'sn', 'sAMAccountName', 'userPrincipalName', 'description', 'mail', 'telephoneNumber', 'userAccountControl', 'lockoutTime')) -or
             ($r.inheritedObjectType -eq 'group' -and $r.objectType -in @('member', 'description', 'managedBy', 'mail', 'info'))) }
    default { $false }
  }
  if (-not $ok) { throw "Refused: right $($r.right) on '$($r.objectType)' inherited by '$($r.inheritedObjectType)' is not a write-account right." }
}`;

const LAPS_GUARD = `function Assert-AllowedRight($r) {
  # the LAPS account's rights and nothing else: Read property + Control access on the clear-text
  # password attributes, Write property on the expiration times, inherited by computer objects only;
  # never msLAPS-EncryptedPassword or any other attribute
  if ($r.inheritedObjectType -ne 'computer' -or $r.inheritance -ne 'CIIO') { throw "Refused: LAPS rights are granted on computer objects only." }
  if ($r.objectType -eq 'msLAPS-EncryptedPassword') { throw "Refused: the right to read msLAPS-EncryptedPassword is never granted." }
  $ok = ($r.right -eq 'RPCR' -and $r.objectType -in @('msLAPS-Password', 'ms-Mcs-AdmPwd')) -or
        ($r.right -eq 'WP' -and $r.objectType -in @('msLAPS-PasswordExpirationTime', 'ms-Mcs-AdmPwdExpirationTime'))
  if (-not $ok) { throw "Refused: right $($r.right) on '$($r.objectType)' is not a LAPS right of this product." }
}`;

/** The delegation script for a rights model (write account or LAPS account). */
export function renderDelegationScript(model: RightsModel, opts: ScriptOptions): string {
  const title = model.kind === 'write' ? 'write account' : 'LAPS account';
  const lines: string[] = [];
  lines.push(
    '#Requires -Version 5.1',
    '#Requires -Modules ActiveDirectory',
    '<#',
    `.SYNOPSIS`,
    `  hdc delegation export: directory rights of the ${title} ${model.identity}.`,
    '.DESCRIPTION',
    `  Generated ${opts.generatedAt}${opts.version ? ` by hdc ${opts.version}` : ''}. Run as a domain administrator:`,
    `    .\\hdc-${model.kind}-rights.ps1 -ManagedOu ${model.ous.map((o) => psString(o.ou.dn)).join(', ')} -Identity ${psString(model.identity)}`,
    '  -ManagedOu and -Identity must match the exported model exactly; OUs holding privileged objects',
    '  are refused; nothing is written unless every check passes. -WhatIf shows the changes only.',
    '  Rights per OU (SDDL, names for GUIDs):',
  );
  for (const o of model.ous) {
    lines.push(`    ${o.ou.dn} [${o.permissions.join(', ')}]`);
    for (const r of o.rights) lines.push(`      ${rightSddl(r)}`);
  }
  lines.push(
    '#>',
    '[CmdletBinding(SupportsShouldProcess = $true)]',
    'param(',
    '  [Parameter(Mandatory = $true)][string[]]$ManagedOu,',
    '  [Parameter(Mandatory = $true)][string]$Identity',
    ')',
    "$ErrorActionPreference = 'Stop'",
    'Import-Module ActiveDirectory',
    '',
    "$Model = @'",
    modelJson(model),
    "'@ | ConvertFrom-Json",
    `$RefusedIdentities = @(${opts.refusedIdentities.map(psString).join(', ')})`,
    '',
    model.kind === 'write' ? WRITE_GUARD : LAPS_GUARD,
    '',
    '# 1. -Identity must be the exported account, and never one the export refuses',
    'if ($Identity -ne $Model.identity) { throw "Refused: -Identity \'$Identity\' does not match the exported model (\'$($Model.identity)\')." }',
    'if ($RefusedIdentities | Where-Object { $_ -eq $Identity }) { throw "Refused: \'$Identity\' may not receive these rights." }',
    '$account = Get-ADUser -Filter "userPrincipalName -eq \'$Identity\'" -Properties objectSid',
    'if (-not $account) { throw "Refused: no user with the UPN \'$Identity\'." }',
    '$sid = [System.Security.Principal.SecurityIdentifier]$account.objectSid',
    '',
    '# 2. -ManagedOu must name exactly the exported OUs (compared by objectGUID: a moved OU still matches)',
    '$given = @($ManagedOu | ForEach-Object { (Get-ADOrganizationalUnit -Identity $_).ObjectGUID.Guid.ToLower() } | Sort-Object -Unique)',
    '$exported = @($Model.ous | ForEach-Object { $_.guid.ToLower() } | Sort-Object -Unique)',
    'if (Compare-Object -ReferenceObject $exported -DifferenceObject $given) { throw "Refused: -ManagedOu does not match the exported OUs: $($Model.ous.dn -join \'; \')." }',
    '',
    '# 3. every right passes the allow-list before anything is written',
    'foreach ($ou in $Model.ous) { foreach ($r in $ou.rights) { Assert-AllowedRight $r } }',
    '',
    '# 4. refuse OUs holding privileged objects (adminCount, critical system objects, members of privileged groups)',
    '$domainSid = (Get-ADDomain).DomainSID.Value',
    `$privilegedSids = @(${BUILTIN_PRIVILEGED.map(psString).join(', ')}) + (@(${DOMAIN_PRIVILEGED_RIDS.join(', ')}) | ForEach-Object { "$domainSid-$_" })`,
    "$clauses = @('(adminCount=1)', '(isCriticalSystemObject=TRUE)')",
    `$clauses += @(${DOMAIN_PRIVILEGED_RIDS.join(', ')}) | ForEach-Object { "(primaryGroupID=$_)" }`,
    'foreach ($s in $privilegedSids) {',
    '  $g = Get-ADGroup -Filter "objectSid -eq \'$s\'"',
    '  if ($g) { $clauses += "(memberOf:1.2.840.113556.1.4.1941:=$($g.DistinguishedName))" }',
    '}',
    '$privilegedFilter = "(|$($clauses -join \'\'))"',
    'foreach ($ou in $Model.ous) {',
    '  $dn = (Get-ADOrganizationalUnit -Identity ([guid]$ou.guid)).DistinguishedName',
    '  $found = @(Get-ADObject -SearchBase $dn -SearchScope Subtree -LDAPFilter $privilegedFilter -ResultSetSize 5)',
    '  if ($found.Count) { throw "Refused: $dn holds privileged objects ($($found.DistinguishedName -join \'; \')); move them out first." }',
    '}',
    '',
    '# 5. schema GUIDs of this forest, then the rules',
    '$schemaNc = (Get-ADRootDSE).schemaNamingContext',
    '$guidOf = @{}',
    'function SchemaGuid($name) {',
    '  if (-not $name) { return [guid]::Empty }',
    '  if (-not $guidOf.ContainsKey($name)) {',
    '    $o = Get-ADObject -SearchBase $schemaNc -LDAPFilter "(lDAPDisplayName=$name)" -Properties schemaIDGUID',
    '    if (-not $o) { throw "Refused: the schema has no \'$name\'." }',
    '    $guidOf[$name] = [guid]$o.schemaIDGUID',
    '  }',
    '  $guidOf[$name]',
    '}',
    `$rightsOf = @{ ${Object.entries(RIGHTS_PS)
      .map(([k, v]) => `${k} = ${psString(v)}`)
      .join('; ')} }`,
    `$inheritanceOf = @{ ${Object.entries(INHERITANCE_PS)
      .map(([k, v]) => `${k} = ${psString(v)}`)
      .join('; ')} }`,
    'foreach ($ou in $Model.ous) {',
    '  $dn = (Get-ADOrganizationalUnit -Identity ([guid]$ou.guid)).DistinguishedName',
    '  $acl = Get-Acl -Path "AD:$dn"',
    '  foreach ($r in $ou.rights) {',
    '    $rule = New-Object System.DirectoryServices.ActiveDirectoryAccessRule($sid, [System.DirectoryServices.ActiveDirectoryRights]$rightsOf[$r.right], [System.Security.AccessControl.AccessControlType]::Allow, (SchemaGuid $r.objectType), [System.DirectoryServices.ActiveDirectorySecurityInheritance]$inheritanceOf[$r.inheritance], (SchemaGuid $r.inheritedObjectType))',
    '    $acl.AddAccessRule($rule)',
    '  }',
    '  if ($PSCmdlet.ShouldProcess($dn, "grant $($ou.rights.Count) rights to $Identity")) { Set-Acl -Path "AD:$dn" -AclObject $acl }',
    '}',
    'Write-Output "Done: rights of $Identity written on $($Model.ous.Count) OU(s)."',
    '',
  );
  return lines.join('\n');
}

/** Every right of a model, deduplicated, for a summary. */
export const modelRightKeys = (model: RightsModel) => [...new Set(model.ous.flatMap((o) => o.rights.map(rightKey)))].sort();
