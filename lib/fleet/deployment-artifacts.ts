import { commentText, psCommentText, psQuote, shQuote } from '../scripts/quoting';
import type { Deployment } from './deployments';
import { yamlText } from './yaml-text';

// The texts a proxy deployment hands out: the new agent's teleport.yaml and install commands
// (preview), and the directory steps for the client's domain administrator (manual directory
// output). None holds the join token: teleport.yaml names the file the token is written to.
// Every field value is validated at the route (deployments.ts) and written quoted for its reader:
// YAML double-quoted scalars (teleport reads YAML 1.1), single-quoted shell words, PowerShell
// single-quoted strings, comments that no character can end (lib/scripts/quoting.ts).

/** NetBIOS name guessed from the DNS domain (first label, upper case); the directory step prints the real one. */
export const netbiosGuess = (domain: string) => domain.split('.')[0].toUpperCase().slice(0, 15);
/** The service account the Windows desktop service binds to LDAP with (certificate logon, no password use). */
export const serviceAccountOf = (d: Pick<Deployment, 'clientCode'>) => `svc-teleport-${d.clientCode}`.slice(0, 20);

const TELEPORT_DATA_DIR = '/var/lib/teleport';
const PLACEHOLDER_PROXY = '<access platform proxy address: DEFAULT_PROXY_ADDR is not set>';

export function teleportYaml(d: Deployment, opts: { proxyAddr: string | null; tokenFile: string }): string {
  const config = {
    version: 'v3',
    teleport: {
      nodename: d.hostname,
      data_dir: TELEPORT_DATA_DIR,
      proxy_server: opts.proxyAddr ?? PLACEHOLDER_PROXY,
      join_params: { method: 'token', token_name: opts.tokenFile },
    },
    auth_service: { enabled: false },
    proxy_service: { enabled: false },
    ssh_service: { enabled: false },
    windows_desktop_service: {
      enabled: true,
      ldap: {
        addr: d.ldapAddress,
        domain: d.domain,
        username: `${netbiosGuess(d.domain)}\\${serviceAccountOf(d)}`,
        sid: '<SID printed by the directory step>',
        ldap_ca_cert: '/var/lib/teleport/ldap-ca.pem',
      },
      discovery: { base_dn: '*' },
      // the fleet plane reads the client from this label on the service and on every desktop
      labels: { client_code: d.clientCode },
      host_labels: [{ match: '.*', labels: { client_code: d.clientCode } }],
    },
  };
  return `# teleport.yaml of ${commentText(d.hostname)}, client ${commentText(d.clientCode)} (fleet deployment ${commentText(d.id)})\n${yamlText(config)}`;
}

export function deploymentInstallFiles(d: Deployment, opts: { proxyAddr: string | null; tokenFile: string }) {
  return {
    files: [{ path: '/etc/teleport.yaml', mode: '0600', content: teleportYaml(d, opts) }],
    commands: [
      `install -d -m 0700 ${shQuote(TELEPORT_DATA_DIR)}`,
      `# write the join token shown once at generation, without it reaching the shell history:`,
      `( umask 077; read -rs -p 'join token: ' T && printf '%s' "$T" > ${shQuote(opts.tokenFile)}; unset T; echo )`,
      `# copy the domain controller's LDAPS CA certificate (PEM) to /var/lib/teleport/ldap-ca.pem`,
      `# put the SID printed by the directory step into /etc/teleport.yaml (windows_desktop_service.ldap.sid)`,
      `systemctl enable --now teleport`,
    ],
    proxyAddressKnown: opts.proxyAddr !== null,
  };
}

/** PowerShell steps for a domain administrator of the client (Active Directory module). */
export function directoryScript(d: Deployment) {
  const account = serviceAccountOf(d);
  const script = [
    `# Directory steps for the new proxy ${psCommentText(d.hostname)} of client ${psCommentText(d.clientCode)} (fleet deployment ${psCommentText(d.id)})`,
    `# Run on a domain controller of ${psCommentText(d.domain)} as a domain administrator, in an elevated PowerShell.`,
    `$ErrorActionPreference = 'Stop'`,
    `Import-Module ActiveDirectory`,
    `$Account = ${psQuote(account)}`,
    ``,
    `# 1. The service account the proxy reads the directory with. It signs in with certificates`,
    `#    only: its password is random, generated here and never shown or stored.`,
    `$Bytes = New-Object byte[] 48; [Security.Cryptography.RandomNumberGenerator]::Create().GetBytes($Bytes)`,
    `$Password = ConvertTo-SecureString ([Convert]::ToBase64String($Bytes)) -AsPlainText -Force`,
    `New-ADUser -Name $Account -SamAccountName $Account -UserPrincipalName ($Account + ${psQuote(`@${d.domain}`)}) -AccountPassword $Password -Enabled $true -PasswordNeverExpires $true -Description ${psQuote(`Access platform Windows desktop service, proxy ${d.hostname}`)}`,
    `Remove-Variable Password, Bytes`,
    ``,
    `# 2. Its SID and the domain's NetBIOS name, for /etc/teleport.yaml on the proxy (ldap.sid, ldap.username)`,
    `(Get-ADUser $Account).SID.Value`,
    `(Get-ADDomain).NetBIOSName`,
    ``,
    `# 3. Publish the access platform's Windows user CA (the MSP exports it: tctl auth export --type=windows > user-ca.cer)`,
    `certutil -dspublish -f user-ca.cer RootCA`,
    `certutil -dspublish -f user-ca.cer NTAuthCA`,
    `certutil -pulse`,
    ``,
    `# 4. The LDAPS CA certificate for the proxy (/var/lib/teleport/ldap-ca.pem): the issuer of this DC's certificate`,
    `Get-ChildItem Cert:\\LocalMachine\\My | Where-Object { $_.EnhancedKeyUsageList.ObjectId -contains '1.3.6.1.5.5.7.3.1' } | Select-Object Subject, Issuer, NotAfter`,
    ``,
    `# 5. Group policy on the computers the proxy serves: allow RDP, require NLA off for smart-card logon,`,
    `#    deny interactive logon for $Account (see the access platform's Active Directory guide).`,
  ].join('\r\n');
  return {
    serviceAccount: account,
    steps: ['service_account', 'sid_and_netbios', 'publish_user_ca', 'ldaps_ca', 'group_policy'],
    script: `${script}\r\n`,
  };
}
