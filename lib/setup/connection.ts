import { z } from 'zod';
import { X509Certificate } from 'node:crypto';

// The directory connection as an administrator gives it (setup, connection changes): its own
// module, so that what only reads the settings (the password service) carries no validator.

const REFUSED_PORTS = new Set(['389', '3268', '3269']);

/** ldaps://host[:636] only (console spec: LDAPS 636 only; 389, 3268 and 3269 refused). */
export const dcUrlSchema = z.string().superRefine((value, ctx) => {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'not a URL', params: { code: 'invalid_dc_url' } });
    return;
  }
  if (u.protocol !== 'ldaps:') ctx.addIssue({ code: 'custom', message: 'only ldaps:// is accepted', params: { code: 'ldaps_required' } });
  else if (REFUSED_PORTS.has(u.port)) ctx.addIssue({ code: 'custom', message: `port ${u.port} is refused: LDAPS 636 only`, params: { code: 'ldaps_port_refused' } });
  else if (u.port && u.port !== '636') ctx.addIssue({ code: 'custom', message: 'LDAPS port must be 636', params: { code: 'ldaps_port_refused' } });
  if (u.pathname && u.pathname !== '/' && u.pathname !== '') ctx.addIssue({ code: 'custom', message: 'no path allowed' });
});

/** A PEM with one or more CERTIFICATE blocks and never a private key. */
export const caPemSchema = z
  .string()
  .max(200_000)
  .refine((pem) => !/PRIVATE KEY/.test(pem), { message: 'the CA PEM contains a private key: refused', params: { code: 'ca_contains_private_key' } })
  .refine((pem) => /-----BEGIN CERTIFICATE-----/.test(pem), { message: 'no certificate in PEM' });

export interface CaCertificate {
  subject: string;
  issuer: string;
  /** SHA-256 of the DER certificate, hex with colons (what an operator compares) */
  fingerprint256: string;
  notBefore: string;
  notAfter: string;
  isCa: boolean;
}

/** The certificates of a CA PEM, in order; throws `ca_unreadable` on a block X.509 cannot read. */
export function caCertificates(pem: string): CaCertificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((block) => {
    let c: X509Certificate;
    try {
      c = new X509Certificate(block);
    } catch {
      throw new CaPemError('ca_unreadable');
    }
    return { subject: c.subject.replace(/\n/g, ', '), issuer: c.issuer.replace(/\n/g, ', '), fingerprint256: c.fingerprint256, notBefore: new Date(c.validFrom).toISOString(), notAfter: new Date(c.validTo).toISOString(), isCa: c.ca };
  });
}

export class CaPemError extends Error {
  constructor(readonly code: 'ca_unreadable') {
    super(code);
    this.name = 'CaPemError';
  }
}

/** The fingerprints an audit row records for a CA PEM (never the PEM itself). */
export const caFingerprints = (pem: string): string[] => {
  try {
    return caCertificates(pem).map((c) => c.fingerprint256);
  } catch {
    return [];
  }
};

/** A UPN suffix: a DNS name (console spec, Directory connection changes: syntax only). */
const DNS_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/;
export const upnSuffixSchema = z
  .string()
  .trim()
  .toLowerCase()
  .refine((v) => DNS_NAME.test(v), { message: 'a DNS name such as example.com', params: { code: 'upn_suffix_invalid' } });
