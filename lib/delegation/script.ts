import { createHash } from 'node:crypto';
import { asciiJson, psCommentText, psQuote } from '../scripts/quoting';
import { rightKey, type ModelRight, type RightsModel } from './model';

// The delegation export as the PowerShell script a domain administrator runs (console spec,
// Versioning 4): `-ManagedOu` and `-Identity` must match the exported model, OUs holding
// privileged objects are refused, and every right passes an allow-list in the script itself
// before any ACL is written (Delete only on the objects, never Delete child; LAPS: only the
// clear-text password attributes and expiration times, on computer objects, for the LAPS account).
// The script grants rights only to the model the console exported (issue 25): the console shows
// the SHA-256 of the embedded model (`modelDigest`), `-ModelDigest` is mandatory, and the script
// compares it with the embedded model's own digest before it reads anything else
// (docs/decisions.md, "The delegation scripts bind their model"). The script is pure ASCII:
// Windows PowerShell 5.1 reads a file without BOM in the ANSI code page.

// Builtin groups and domain RIDs whose members are privileged (lib/authz/classify.ts, the same list).
const BUILTIN_PRIVILEGED = ['S-1-5-32-544', 'S-1-5-32-548', 'S-1-5-32-549', 'S-1-5-32-550', 'S-1-5-32-551', 'S-1-5-32-552', 'S-1-5-32-569'];
const DOMAIN_PRIVILEGED_RIDS = [498, 512, 516, 517, 518, 519, 520, 521, 526, 527];

const RIGHTS_PS: Record<ModelRight['right'], string> = {
  CC: 'CreateChild',
  SD: 'Delete',
  WP: 'WriteProperty',
  RPCR: 'ReadProperty, ExtendedRight',
  RPLCLORC: 'ReadProperty, ListChildren, ListObject, ReadControl',
};
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

const psString = psQuote;

/**
 * The model as the script embeds it, in a single-quoted here-string (nothing in it is expanded):
 * JSON of printable ASCII only (other characters as \u escapes), lines joined by LF. Its bytes
 * are the canonical form the digest is taken over; it holds everything the script grants from
 * (the account, the accounts it refuses, the OUs and their rights), and no time, so one model
 * always has one digest.
 */
export function embeddedModelText(model: RightsModel, refusedIdentities: string[]): string {
  return asciiJson({
    kind: model.kind,
    identity: model.identity,
    refusedIdentities,
    ous: model.ous.map((o) => ({
      dn: o.ou.dn,
      guid: o.ou.guid,
      permissions: o.permissions,
      rights: o.rights.map((r) => ({ right: r.right, objectType: r.objectType ?? null, inheritedObjectType: r.inheritedObjectType ?? null, inheritance: r.inheritance })),
    })),
  });
}

/** SHA-256 (hex) of the embedded model's text as UTF-8: what the console shows, what `-ModelDigest` must be. */
export const modelDigestOf = (embeddedText: string): string => createHash('sha256').update(embeddedText.replace(/\r/g, ''), 'utf8').digest('hex');

/** The digest of a model as the script for it embeds it. */
export const modelDigest = (model: RightsModel, refusedIdentities: string[]): string => modelDigestOf(embeddedModelText(model, refusedIdentities));

/** The command line a domain administrator runs (shown by the console beside the digest). */
export const scriptCommand = (model: RightsModel, digest: string): string =>
  `.\\hdc-${model.kind}-rights.ps1 -ManagedOu ${model.ous.map((o) => psString(o.ou.dn)).join(', ')} -Identity ${psString(model.identity)} -ModelDigest ${digest}`;

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

const BITLOCKER_GUARD = `function Assert-AllowedRight($r) {
  # the BitLocker account's rights and nothing else (issue 33): read msFVE-RecoveryInformation
  # objects and Read property + Control access on msFVE-RecoveryPassword, inherited by those
  # objects only; never msFVE-KeyPackage or any other attribute
  if ($r.inheritedObjectType -ne 'msFVE-RecoveryInformation' -or $r.inheritance -ne 'CIIO') { throw "Refused: BitLocker rights are granted on msFVE-RecoveryInformation objects only." }
  if ($r.objectType -eq 'msFVE-KeyPackage') { throw "Refused: the right to read msFVE-KeyPackage is never granted." }
  $ok = ($r.right -eq 'RPLCLORC' -and -not $r.objectType) -or ($r.right -eq 'RPCR' -and $r.objectType -eq 'msFVE-RecoveryPassword')
  if (-not $ok) { throw "Refused: right $($r.right) on '$($r.objectType)' is not a BitLocker right of this product." }
}`;

/** The delegation script for a rights model (write account, LAPS account or BitLocker account). */
export function renderDelegationScript(model: RightsModel, opts: ScriptOptions): string {
  const title = model.kind === 'write' ? 'write account' : model.kind === 'laps' ? 'LAPS account' : 'BitLocker account';
  const lines: string[] = [];
  lines.push(
    '#Requires -Version 5.1',
    '#Requires -Modules ActiveDirectory',
    '<#',
    `.SYNOPSIS`,
    `  hdc delegation export: directory rights of the ${title} ${psCommentText(model.identity)}.`,
    '.DESCRIPTION',
    `  Generated ${psCommentText(opts.generatedAt)}${opts.version ? ` by hdc ${psCommentText(opts.version)}` : ''}. Run as a domain administrator:`,
    `    ${psCommentText(scriptCommand(model, '<the model digest the console shows for this export>'))}`,
    '  -ModelDigest must be the digest the console showed (never one copied from this file): the',
    '  script refuses a model edited after the export. -ManagedOu and -Identity must match the model',
    '  exactly; OUs holding privileged objects are refused; nothing is written unless every check',
    '  passes. -WhatIf shows the changes only. Rights per OU (SDDL, names for GUIDs):',
  );
  for (const o of model.ous) {
    lines.push(`    ${psCommentText(o.ou.dn)} [${o.permissions.join(', ')}]`);
    for (const r of o.rights) lines.push(`      ${psCommentText(rightSddl(r))}`);
  }
  lines.push(
    '#>',
    '[CmdletBinding(SupportsShouldProcess = $true)]',
    'param(',
    '  [Parameter(Mandatory = $true)][string[]]$ManagedOu,',
    '  [Parameter(Mandatory = $true)][string]$Identity,',
    "  [Parameter(Mandatory = $true)][ValidatePattern('^[0-9A-Fa-f]{64}$')][string]$ModelDigest",
    ')',
    "$ErrorActionPreference = 'Stop'",
    '',
    '# 0. the embedded model must be the one the console exported: the SHA-256 of its text (UTF-8,',
    '#    line ends as LF) must be the -ModelDigest the console showed; nothing else is read before',
    "$ModelText = @'",
    embeddedModelText(model, opts.refusedIdentities),
    "'@",
    '$sha256 = [System.Security.Cryptography.SHA256]::Create()',
    "$embeddedDigest = -join ($sha256.ComputeHash([System.Text.Encoding]::UTF8.GetBytes(($ModelText -replace \"`r\", ''))) | ForEach-Object { $_.ToString('x2') })",
    'if ($embeddedDigest -ne $ModelDigest.ToLowerInvariant()) { throw "Refused: the embedded model (digest $embeddedDigest) is not the one the console exported (-ModelDigest $ModelDigest); nothing was changed." }',
    '$Model = $ModelText | ConvertFrom-Json',
    '$RefusedIdentities = @($Model.refusedIdentities)',
    'Import-Module ActiveDirectory',
    '',
    model.kind === 'write' ? WRITE_GUARD : model.kind === 'laps' ? LAPS_GUARD : BITLOCKER_GUARD,
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
