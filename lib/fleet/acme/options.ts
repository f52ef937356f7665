import { z } from 'zod';
import { processEnvironment, type Environment } from '../../config/environment';
import { parseAllowedTargets } from '../../outbound/policy';

// The installer options of the fleet plane's own certificate by DNS-01 (spec: DNS challenge
// install variables). Secrets are never accepted on a command line: they come from the
// credentials file, the kept copy in the instance secrets folder, or are typed on the server.

export const DNS_PROVIDER = 'dns_main';
/** DNSMAIN_END_POINT values (spec), `main-eu` when absent (DESIGN decision 9). */
export const DNSMAIN_END_POINTS = ['main-eu', 'main-us', 'main-ca', 'budget-eu', 'budget-ca', 'value-eu', 'value-ca'] as const;
export type DnsMainEndPoint = (typeof DNSMAIN_END_POINTS)[number];
export const DEFAULT_END_POINT: DnsMainEndPoint = 'main-eu';
export const DNSMAIN_SECRETS = ['DNSMAIN_AK', 'DNSMAIN_AS', 'DNSMAIN_CK'] as const;

export const LETS_ENCRYPT = 'https://acme-v02.api.letsencrypt.org/directory';

export class InstallOptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InstallOptionError';
  }
}

const hostName = z
  .string()
  .toLowerCase()
  .regex(/^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/, 'a fully qualified host name');

export interface TlsInstallOptions {
  name: string;
  publicUrl: string;
  httpsPort: number;
  tls: 'acme-dns';
  dnsProvider: typeof DNS_PROVIDER;
  endPoint?: DnsMainEndPoint;
  credentialsFile?: string;
  acmeEmail: string;
  acmeDirectory: string;
  instanceDir: string;
  renewBeforeDays: number;
  propagationSeconds: number;
  /** a provider-compatible API at another URL (a stand-in for tests, a proxy); https, or http on loopback only */
  dnsApiUrl?: string;
  teleportLocal?: 'auto';
  /** FLEET_OUTBOUND_ALLOWED_TARGETS: what the ACME directory and the DNS API may be beyond public addresses */
  allowedTargets: string[];
}

const VALUE_FLAGS = new Set(['--name', '--public-url', '--https-port', '--tls', '--dns-provider', '--dns-setting', '--dns-credentials-file', '--acme-email', '--acme-directory', '--instance-dir', '--renew-before-days', '--dns-propagation-seconds', '--dns-api-url', '--teleport-local']);

/** Parse `--flag value` / `--flag=value`; `--dns-setting` may repeat. */
function readFlags(argv: string[]): { flags: Map<string, string>; settings: string[] } {
  const flags = new Map<string, string>();
  const settings: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const eq = a.indexOf('=');
    const name = a.startsWith('--') && eq > 0 ? a.slice(0, eq) : a;
    if (!VALUE_FLAGS.has(name)) throw new InstallOptionError(`unknown option ${name.replace(/=.*/, '')}`);
    const value = eq > 0 && a.startsWith('--') ? a.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new InstallOptionError(`${name} needs a value`);
    if (name === '--dns-setting') settings.push(value);
    else if (flags.has(name)) throw new InstallOptionError(`${name} given twice`);
    else flags.set(name, value);
  }
  return { flags, settings };
}

/** `--dns-setting VARIABLE=value`: only DNSMAIN_END_POINT; a secret there is refused (it would sit in the shell history and `ps`). */
export function parseDnsSettings(settings: string[]): { endPoint?: DnsMainEndPoint } {
  let endPoint: DnsMainEndPoint | undefined;
  for (const s of settings) {
    const eq = s.indexOf('=');
    const key = eq > 0 ? s.slice(0, eq) : s;
    if ((DNSMAIN_SECRETS as readonly string[]).includes(key)) {
      throw new InstallOptionError(`${key} is a secret: put it in the --dns-credentials-file (readable by root only) or type it when asked, never on a command line`);
    }
    if (key !== 'DNSMAIN_END_POINT') throw new InstallOptionError(`unknown DNS setting ${key} (dns_main takes DNSMAIN_END_POINT)`);
    endPoint = parseEndPoint(s.slice(eq + 1));
  }
  return { endPoint };
}

export function parseEndPoint(v: string): DnsMainEndPoint {
  if (!(DNSMAIN_END_POINTS as readonly string[]).includes(v)) throw new InstallOptionError(`DNSMAIN_END_POINT must be one of ${DNSMAIN_END_POINTS.join(', ')} (got "${v}")`);
  return v as DnsMainEndPoint;
}

const intIn = (v: string | undefined, name: string, min: number, max: number, def: number) => {
  if (v === undefined) return def;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) throw new InstallOptionError(`${name} must be an integer from ${min} to ${max}`);
  return n;
};

export function parseTlsInstallOptions(argv: string[], env: Environment = processEnvironment()): TlsInstallOptions {
  const { flags, settings } = readFlags(argv);
  const f = (k: string) => flags.get(k);
  if (f('--tls') !== 'acme-dns') throw new InstallOptionError('--tls acme-dns is the certificate option this step installs');
  if ((f('--dns-provider') ?? DNS_PROVIDER) !== DNS_PROVIDER) throw new InstallOptionError(`--dns-provider must be ${DNS_PROVIDER}`);
  const nameP = hostName.safeParse(f('--name') ?? '');
  if (!nameP.success) throw new InstallOptionError('--name must be the fleet plane\'s fully qualified host name');
  const name = nameP.data;
  const email = z.email().safeParse(f('--acme-email') ?? '');
  if (!email.success) throw new InstallOptionError('--acme-email must be an e-mail address (the CA writes to it about expiry)');
  const httpsPort = intIn(f('--https-port'), '--https-port', 1, 65535, 443);
  const publicUrl = f('--public-url') ?? `https://${name}${httpsPort === 443 ? '' : `:${httpsPort}`}`;
  let url: URL;
  try {
    url = new URL(publicUrl);
  } catch {
    throw new InstallOptionError('--public-url must be a URL');
  }
  if (url.protocol !== 'https:' || url.hostname !== name) throw new InstallOptionError(`--public-url must be https://${name}[:port]: the certificate is issued for --name`);
  if (Number(url.port || 443) !== httpsPort) throw new InstallOptionError(`--public-url's port (${url.port || 443}) differs from --https-port (${httpsPort})`);
  const directory = f('--acme-directory') ?? LETS_ENCRYPT;
  if (!/^https:\/\//.test(directory)) throw new InstallOptionError('--acme-directory must be an https URL');
  const apiUrl = f('--dns-api-url');
  if (apiUrl !== undefined) {
    const u = new URL(apiUrl);
    const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname);
    if (!(u.protocol === 'https:' || (u.protocol === 'http:' && loopback))) throw new InstallOptionError('--dns-api-url must be https (http only on loopback)');
  }
  const teleportLocal = f('--teleport-local');
  if (teleportLocal !== undefined && teleportLocal !== 'auto') throw new InstallOptionError('--teleport-local takes auto');
  // the same outbound policy as the fleet plane's (lib/outbound/policy.ts), from the same variable
  const allowedTargets = (env.FLEET_OUTBOUND_ALLOWED_TARGETS ?? '').split(/[\s,]+/).filter(Boolean);
  try {
    parseAllowedTargets(allowedTargets);
  } catch {
    throw new InstallOptionError('FLEET_OUTBOUND_ALLOWED_TARGETS must list addresses or CIDR blocks, each with an optional :port');
  }
  return {
    name,
    publicUrl: url.origin,
    httpsPort,
    tls: 'acme-dns',
    dnsProvider: DNS_PROVIDER,
    ...parseDnsSettings(settings),
    credentialsFile: f('--dns-credentials-file'),
    acmeEmail: email.data,
    acmeDirectory: directory,
    instanceDir: f('--instance-dir') ?? '/opt/hdc-fleet',
    renewBeforeDays: intIn(f('--renew-before-days'), '--renew-before-days', 1, 3650, 30),
    propagationSeconds: intIn(f('--dns-propagation-seconds'), '--dns-propagation-seconds', 0, 3600, 60),
    ...(apiUrl ? { dnsApiUrl: apiUrl.replace(/\/+$/, '') } : {}),
    ...(teleportLocal ? { teleportLocal: 'auto' as const } : {}),
    allowedTargets,
  };
}
