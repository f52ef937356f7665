import { z } from 'zod';
import { PERMISSIONS } from '../../authz/permissions';

// The console's answers about sign-in, the operator's session, first-run setup and what the
// sign-in page shows.

export const antiforgery = z.object({ token: z.string() }).meta({ id: 'Antiforgery', description: "the session's CSRF token (X-CSRF-TOKEN)" });
export const signedIn = z
  .object({ operator: z.object({ username: z.string(), displayName: z.string().optional() }), csrfToken: z.string() })
  .meta({ id: 'SignedIn', description: 'the new session (cookie __Host-hdc) and its CSRF token' });
export const me = z
  .object({
    username: z.string(),
    displayName: z.string().optional(),
    provider: z.enum(['ad', 'access']),
    superAdministrator: z.boolean(),
    permissions: z.array(z.enum(PERMISSIONS)),
    stepUpMode: z.enum(['none', 'password', 'authenticator', 'passkey']).optional(),
    /** the last step-up of this session, null when none */
    stepUpAt: z.string().nullable(),
    stepUpWindowSeconds: z.number(),
    /** the branding title, else the directory's domain */
    instance: z.string().optional(),
    accentColour: z.string(),
    /** administrators (settings.manage): what they must see first, e.g. fewer than two DCs (lib/diagnostics/notices.ts); empty for others */
    notices: z.array(z.object({ code: z.enum(['dc_fewer_than_two']), severity: z.enum(['warning']), count: z.number() })),
  })
  .meta({ id: 'Me' });
export const stepUpDone = z.object({ proof: z.enum(['access', 'password', 'authenticator', 'passkey']), validSeconds: z.number() }).meta({ id: 'StepUp' });

export const setupState = z.object({ configured: z.boolean(), setupOpen: z.boolean() });
export const setupDone = z.object({
  dcs: z.array(z.object({ name: z.string(), url: z.string(), ok: z.boolean(), problem: z.enum(['bind_refused', 'unreachable_or_untrusted']).optional() })),
  managedOus: z.array(z.object({ dn: z.string(), guid: z.string() })),
  superAdministrator: z.object({ guid: z.string(), name: z.string() }),
});
export const publicBranding = z.object({ title: z.string().optional(), accentColour: z.string().optional() }).meta({ id: 'SignInBranding' });
