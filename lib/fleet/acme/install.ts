import fs from 'node:fs';
import path from 'node:path';
import { X509Certificate } from 'node:crypto';
import * as acme from 'acme-client';
import { outboundAgents, outboundTrust } from '../../outbound/https';
import { refusedUrlTarget } from '../../outbound/policy';
import { resolveCredentials, writeKeptCopy, type Prompt } from './credentials';
import { DnsMainClient, END_POINT_URLS, type TxtRecord } from './dns-main';
import { DEFAULT_END_POINT, InstallOptionError, type TlsInstallOptions } from './options';

// The installer step `--tls acme-dns`: the fleet plane's own certificate by DNS-01 through a real
// ACME client (acme-client) and the dns_main provider adapter. Re-running it renews: a
// certificate further than `renewBeforeDays` from its expiry is kept, otherwise a new one is
// issued (a timer runs the installer daily; docs/fleet.md).
//
// Instance layout (under --instance-dir):
//   secrets/acme-dns.env       provider credentials kept for renewals (0600)
//   secrets/acme-account.key   the ACME account key (0600)
//   tls/fullchain.pem          certificate and chain (0644)
//   tls/privkey.pem            its key (0600)

export const tlsPaths = (instanceDir: string) => ({
  accountKey: path.join(instanceDir, 'secrets', 'acme-account.key'),
  cert: path.join(instanceDir, 'tls', 'fullchain.pem'),
  key: path.join(instanceDir, 'tls', 'privkey.pem'),
});

export interface TlsInstallResult {
  action: 'issued' | 'kept';
  name: string;
  notAfter: string;
  serial: string;
  certFile: string;
  keyFile: string;
  credentials: 'file' | 'kept' | 'typed';
}

function writePrivate(file: string, data: string | Buffer, mode: number) {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, data, { mode, flag: 'w' });
  fs.chmodSync(tmp, mode);
  fs.renameSync(tmp, file);
}

/** The installed certificate, if it is for `name`. */
export function currentCertificate(certFile: string, name: string): X509Certificate | undefined {
  if (!fs.existsSync(certFile)) return undefined;
  try {
    const cert = new X509Certificate(fs.readFileSync(certFile));
    return cert.checkHost(name) ? cert : undefined;
  } catch {
    return undefined;
  }
}

export const needsRenewal = (cert: X509Certificate | undefined, renewBeforeDays: number, now = Date.now()) =>
  !cert || Date.parse(cert.validTo) - now < renewBeforeDays * 86_400_000;

export async function installTls(opts: TlsInstallOptions, io: { prompt?: Prompt; log?: (line: string) => void } = {}): Promise<TlsInstallResult> {
  const log = io.log ?? (() => undefined);
  const paths = tlsPaths(opts.instanceDir);
  // the outbound policy (lib/outbound/policy.ts): checked here first, so a refused CA or DNS API
  // fails at once and before anything is written; the agents below check every connection again
  const trust = outboundTrust(opts.allowedTargets);
  const calls: Array<[string, string]> = [['--acme-directory', opts.acmeDirectory], ['--dns-api-url', opts.dnsApiUrl ?? END_POINT_URLS[opts.endPoint ?? DEFAULT_END_POINT]]];
  for (const [flag, url] of calls) {
    const reason = await refusedUrlTarget(new URL(url), trust);
    if (reason) throw new InstallOptionError(`${flag}: the outbound policy refuses that address (${reason}); a lab admits its own in FLEET_OUTBOUND_ALLOWED_TARGETS`);
  }
  const { credentials, source } = await resolveCredentials(opts, io.prompt);
  // keep the copy renewals read, once the keys worked (a --dns-setting end point given on a renewal is kept too)
  const keep = () => {
    if (source !== 'kept' || opts.endPoint !== undefined) log(`DNS credentials kept in ${writeKeptCopy(opts.instanceDir, credentials)} (mode 0600)${source === 'file' ? '; delete the credentials file you gave' : ''}`);
  };

  const existing = currentCertificate(paths.cert, opts.name);
  if (!needsRenewal(existing, opts.renewBeforeDays)) {
    // new keys (a file, typed) replace the kept copy only once they worked: with nothing to renew,
    // one signed read of the zone proves them (a wrong token fails now, not at the next renewal)
    if (source !== 'kept') await new DnsMainClient(credentials, { apiUrl: opts.dnsApiUrl, trust }).findZone(`_acme-challenge.${opts.name}`);
    keep();
    log(`certificate for ${opts.name} valid until ${existing!.validTo}: nothing to renew (renews ${opts.renewBeforeDays} days before)`);
    return { action: 'kept', name: opts.name, notAfter: new Date(existing!.validTo).toISOString(), serial: existing!.serialNumber, certFile: paths.cert, keyFile: paths.key, credentials: source };
  }

  let accountKey: Buffer;
  if (fs.existsSync(paths.accountKey)) accountKey = fs.readFileSync(paths.accountKey);
  else {
    accountKey = await acme.crypto.createPrivateEcdsaKey('P-256');
    writePrivate(paths.accountKey, accountKey, 0o600);
  }
  // every ACME and DNS API connection under the outbound policy (lib/outbound/https.ts)
  const agents = outboundAgents(trust);
  acme.axios.defaults.httpsAgent = agents.https;
  acme.axios.defaults.httpAgent = agents.http;
  acme.axios.defaults.proxy = false;
  const client = new acme.Client({ directoryUrl: opts.acmeDirectory, accountKey });
  const [certKey, csr] = await acme.crypto.createCsr({ altNames: [opts.name] }, await acme.crypto.createPrivateEcdsaKey('P-256'));
  const dns = new DnsMainClient(credentials, { apiUrl: opts.dnsApiUrl, trust });
  const records = new Map<string, TxtRecord>();
  log(`ordering a certificate for ${opts.name} from ${opts.acmeDirectory} (DNS-01 through ${opts.dnsProvider}, ${credentials.DNSMAIN_END_POINT})`);
  const pem = await client.auto({
    csr,
    email: opts.acmeEmail,
    termsOfServiceAgreed: true,
    challengePriority: ['dns-01'],
    // the CA reads the provider's public DNS; the wait below replaces the client's own lookup
    skipChallengeVerification: true,
    challengeCreateFn: async (authz, challenge, keyAuthorization) => {
      if (challenge.type !== 'dns-01') throw new Error(`unexpected challenge ${challenge.type}`);
      const host = `_acme-challenge.${authz.identifier.value.replace(/^\*\./, '')}`;
      records.set(keyAuthorization, await dns.addTxt(host, keyAuthorization));
      log(`TXT ${host} written; waiting ${opts.propagationSeconds} s for the zone to propagate`);
      if (opts.propagationSeconds > 0) await new Promise((r) => setTimeout(r, opts.propagationSeconds * 1000));
    },
    challengeRemoveFn: async (_authz, _challenge, keyAuthorization) => {
      const rec = records.get(keyAuthorization);
      if (rec) await dns.removeTxt(rec);
    },
  });
  writePrivate(paths.key, certKey, 0o600);
  writePrivate(paths.cert, pem, 0o644);
  keep();
  const cert = new X509Certificate(pem);
  log(`certificate for ${opts.name} installed in ${paths.cert}, valid until ${cert.validTo}`);
  return { action: 'issued', name: opts.name, notAfter: new Date(cert.validTo).toISOString(), serial: cert.serialNumber, certFile: paths.cert, keyFile: paths.key, credentials: source };
}
