import { z } from 'zod';
import { ou } from './admin';

// The console's settings answers (settings.manage): access-platform sign-in, the directory
// connection, the step-up mode, the branding, and the diagnostics.

const group = z.object({ dn: z.string(), guid: z.string(), sid: z.string() });
const mapping = z.object({ role: z.string().optional(), trait: z.string().optional(), value: z.string().optional(), group }).meta({ id: 'AccessMapping' });
export const accessSettings = z.object({
  configured: z.boolean(),
  accessOnly: z.boolean(),
  passwordSignInAllowedByHost: z.boolean(),
  stepUp: z.enum(['Session', 'Deny']),
  adAccountClaims: z.string(),
  superAdministratorsRequireRoleMapping: z.boolean(),
  mappings: z.array(mapping),
});
export const accessOnlyChanged = z.object({ accessOnly: z.boolean(), changed: z.boolean() });
export const accessMappings = z.object({ mappings: z.array(mapping) });

const certificate = z.object({ subject: z.string(), fingerprint256: z.string(), notBefore: z.string(), notAfter: z.string() });
const dcProblem = z.enum(['name_not_resolved', 'unreachable', 'no_answer', 'tls_untrusted', 'tls_name_mismatch', 'tls_failed', 'bind_refused', 'wrong_domain', 'ldap_error']);
const dcCheck = z.object({ name: z.string(), url: z.string(), ok: z.boolean(), added: z.boolean(), problem: dcProblem.optional() }).meta({ id: 'DcCheck' });
export const directoryConnection = z.object({
  domain: z.string(),
  baseDn: z.string(),
  dcs: z.array(z.object({ name: z.string(), url: z.string() })),
  ca: z.array(certificate),
  upnSuffixes: z.array(z.string()),
  accounts: z.object({
    read: z.object({ user: z.string() }),
    write: z.object({ user: z.string() }),
    laps: z.object({ user: z.string().nullable(), fileProvided: z.boolean() }),
    reset: z.object({ fileProvided: z.boolean() }),
  }),
  managedOus: z.array(ou),
  tierOus: z.array(ou),
});
export const dcDiscovery = z.object({
  query: z.string(),
  dnsServers: z.array(z.string()),
  proposals: z.array(
    z.object({
      name: z.string(),
      host: z.string(),
      srvPort: z.number(),
      priority: z.number(),
      weight: z.number(),
      addresses: z.array(z.string()),
      url: z.string(),
      configured: z.boolean(),
      configuredAs: z.string().optional(),
    }),
  ),
  saved: z.boolean(),
});
export const dcsChanged = z.object({ changed: z.boolean(), dcs: z.array(dcCheck), warnings: z.array(z.string()).optional() });
export const caChanged = z.object({ changed: z.boolean(), certificates: z.array(certificate), dcs: z.array(dcCheck), passwordService: z.string().optional() });
export const upnSuffixesChanged = z.object({ changed: z.boolean(), upnSuffixes: z.array(z.string()) });
export const accountPasswordChanged = z.object({ account: z.enum(['read', 'write']), user: z.string(), dcs: z.array(dcCheck) });
export const managedOusChanged = z.object({
  changed: z.boolean(),
  managedOus: z.array(ou),
  impact: z.array(z.object({ delegation: z.string(), role: z.string(), ous: z.array(z.string()) })).optional(),
});

export const stepUpModeChanged = z.object({ mode: z.enum(['none', 'password', 'authenticator', 'passkey']), previous: z.enum(['none', 'password', 'authenticator', 'passkey']), warning: z.string().optional() });
export const branding = z
  .object({ branding: z.object({ title: z.string().nullable(), accentColour: z.string(), showOnSignIn: z.boolean() }), version: z.number() })
  .meta({ id: 'Branding' });

const check = z
  .object({ code: z.string(), section: z.enum(['delegation', 'directory', 'laps', 'signin']), severity: z.enum(['ok', 'info', 'warning', 'error']), remedy: z.string(), details: z.record(z.string(), z.unknown()).optional() })
  .meta({ id: 'DiagnosticsCheck' });
export const diagnostics = z.object({
  generatedAt: z.string(),
  summary: z.object({ errors: z.number(), warnings: z.number() }),
  checks: z.array(check),
  lapsScopes: z.array(z.object({ scope: z.string(), sample: z.string().optional(), checks: z.array(check) })),
  bitlockerScopes: z.array(z.object({ scope: z.string(), sample: z.string().optional(), checks: z.array(check) })),
});
export const lapsDiagnostics = z.object({ checks: z.array(z.string()), scopes: z.array(z.object({ scope: z.string(), sample: z.string().optional(), checks: z.array(z.string()) })) });
