import { Client, InvalidCredentialsError } from 'ldapts';
import type { DcEndpoint, DirectoryCredentials } from './endpoints';

// The check a directory connection change runs before anything is stored (console spec,
// Directory connection changes): on one DC, a TLS handshake with the given CA and the DC's host
// name, then a bind of the given account, then the DC's naming context (the domain cannot change).
// Each DC on a connection of its own; nothing here touches the console's pool.

export type DcProblem =
  /** the host name does not resolve */
  | 'name_not_resolved'
  /** no TCP connection (refused, no route) */
  | 'unreachable'
  /** TCP accepted, no TLS or LDAP answer within the connect timeout */
  | 'no_answer'
  /** the DC's certificate does not chain to the CA (or has expired) */
  | 'tls_untrusted'
  /** the certificate chains, but its names do not hold the DC's host name */
  | 'tls_name_mismatch'
  /** any other TLS failure */
  | 'tls_failed'
  /** the DC answered and refused the account's credentials */
  | 'bind_refused'
  /** the DC serves another domain than the configured one */
  | 'wrong_domain'
  /** the DC answered with an LDAP error */
  | 'ldap_error';

export interface DcProbe {
  name: string;
  url: string;
  ok: boolean;
  problem?: DcProblem;
}

export interface ProbeOptions {
  caPem: string;
  creds: DirectoryCredentials;
  connectTimeoutMs: number;
  /** the domain's root DN: a DC whose defaultNamingContext differs is `wrong_domain` */
  baseDn?: string;
}

const TLS_UNTRUSTED = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'INVALID_CA',
]);

/** What went wrong, from the error a connect or bind failed with (never its text in an answer). */
export function dcProblemOf(e: unknown): DcProblem {
  if (e instanceof InvalidCredentialsError) return 'bind_refused';
  const code = (e as { code?: unknown })?.code;
  if (typeof code === 'string') {
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'name_not_resolved';
    if (code === 'ECONNREFUSED' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'ECONNRESET' || code === 'EADDRNOTAVAIL') return 'unreachable';
    if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return 'tls_name_mismatch';
    if (TLS_UNTRUSTED.has(code)) return 'tls_untrusted';
    if (code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL')) return 'tls_failed';
  }
  if (typeof code === 'number') return 'ldap_error';
  const message = e instanceof Error ? e.message : '';
  if (/Connection timeout|Operation timed out/.test(message)) return 'no_answer';
  return 'ldap_error';
}

/** Handshake, bind and naming context on one DC. */
export async function probeDc(dc: DcEndpoint, opts: ProbeOptions): Promise<DcProbe> {
  const client = new Client({
    url: dc.url,
    connectTimeout: opts.connectTimeoutMs,
    timeout: opts.connectTimeoutMs,
    // the given CA is the only trust anchor; the host name (or IP SAN) is verified by TLS
    tlsOptions: { ca: [opts.caPem], minVersion: 'TLSv1.2', rejectUnauthorized: true },
  });
  try {
    await client.bind(opts.creds.user, opts.creds.password);
    if (opts.baseDn) {
      const { searchEntries } = await client.search('', { scope: 'base', filter: '(objectClass=*)', attributes: ['defaultNamingContext'] });
      const nc = [searchEntries[0]?.defaultNamingContext].flat()[0];
      if (typeof nc !== 'string' || nc.toLowerCase().replace(/\s+/g, '') !== opts.baseDn.toLowerCase().replace(/\s+/g, '')) {
        return { name: dc.name, url: dc.url, ok: false, problem: 'wrong_domain' };
      }
    }
    return { name: dc.name, url: dc.url, ok: true };
  } catch (e) {
    return { name: dc.name, url: dc.url, ok: false, problem: dcProblemOf(e) };
  } finally {
    await client.unbind().catch(() => undefined);
  }
}

/** Every DC at once (one silent DC costs the round its connect timeout, not one each). */
export function probeDcs(dcs: DcEndpoint[], opts: ProbeOptions): Promise<DcProbe[]> {
  return Promise.all(dcs.map((dc) => probeDc(dc, opts)));
}

/** Did the DC answer at all (a DC that answered and refused is not "silent")? */
export const dcAnswered = (p: DcProbe) => p.ok || !['name_not_resolved', 'unreachable', 'no_answer'].includes(p.problem!);
