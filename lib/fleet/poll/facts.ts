import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import { httpsRequest, type OutboundTrust } from '../../outbound/https';
import type { IdentityFacts } from '../alerts/rules';
import type { ClusterCli } from '../cluster-cli';
import type { FleetConfig } from '../config';
import { buildProxies, readSnapshot } from '../nodes';
import type { RoundFacts } from './round';

// The facts a round reads beside the consoles: the cluster's proxies (one read; an error means no
// proxy decision), the fleet plane's own identity, and the access proxy's certificate (one
// handshake per round; unread means no decision).

export const MACHINE_ID_RENEWAL_MS = 20 * 60_000; // tbot's default renewal interval

function certificateExpiry(pem: string): string | undefined {
  const m = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(pem);
  if (!m) return undefined;
  try {
    return new Date(new X509Certificate(m[0]).validTo).toISOString();
  } catch {
    return undefined;
  }
}

export function identityFacts(config: Pick<FleetConfig, 'ACCESS_IDENTITY_FILE' | 'ACCESS_MACHINE_ID_IDENTITY'>): IdentityFacts | undefined {
  const file = config.ACCESS_MACHINE_ID_IDENTITY ?? config.ACCESS_IDENTITY_FILE;
  if (!file) return undefined;
  const mode = config.ACCESS_MACHINE_ID_IDENTITY ? 'machine_id' : 'identity_file';
  let content: string | undefined;
  let modifiedAt: string | null | undefined;
  try {
    modifiedAt = fs.statSync(file).mtime.toISOString();
    content = fs.readFileSync(file, 'utf8');
  } catch (e) {
    modifiedAt = (e as NodeJS.ErrnoException).code === 'ENOENT' ? null : undefined;
  }
  return { mode, expiresAt: content ? certificateExpiry(content) : undefined, ...(mode === 'machine_id' ? { modifiedAt } : {}), renewalIntervalMs: MACHINE_ID_RENEWAL_MS };
}

/** One handshake with the access proxy (DEFAULT_PROXY_ADDR, host:port): its certificate when it verified, or verified apart from its dates. */
export async function accessProxyCertificate(addr: string | undefined, trust?: OutboundTrust): Promise<RoundFacts['accessCert']> {
  if (!addr || /example|changeme|<|\.test(:|$)/.test(addr)) return undefined; // placeholders and the local fake cluster
  const r = await httpsRequest({ url: `https://${addr}/webapi/ping`, timeoutMs: 10_000, logContext: { target: 'access_proxy' } }, trust);
  return r.cert ? { validTo: r.cert.validTo, subject: r.cert.subject } : undefined;
}

export async function readRoundFacts(cli: ClusterCli, config: FleetConfig, trust?: OutboundTrust): Promise<RoundFacts> {
  const [proxies, accessCert] = await Promise.all([
    readSnapshot(cli)
      .then((snap) => buildProxies(snap, Date.now()).proxies)
      .catch(() => undefined), // cluster unreadable: proxy alerts neither fire nor resolve
    accessProxyCertificate(config.DEFAULT_PROXY_ADDR, trust).catch(() => undefined),
  ]);
  return { proxies, identity: identityFacts(config), accessCert };
}
