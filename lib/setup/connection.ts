import { z } from 'zod';

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
