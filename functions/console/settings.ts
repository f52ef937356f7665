import { z } from 'zod';
import { brandingInputSchema, publicBranding, readBranding, saveBranding } from '@lib/setup/branding';
import { updateStepUpMode } from '@lib/setup/step-up-mode';
import { updatePasskeySignIn } from '@lib/auth/passkey-signin';
import { passkeySignInChanged } from '@lib/api/console/passkeys';
import { STEP_UP_MODES } from '@lib/setup/settings';
import { consoleHandler } from '@lib/http/console';
import { defineRoute } from '@lib/http/route';
import { branding, stepUpModeChanged } from '@lib/api/console/settings';
import { publicBranding as publicBrandingAnswer } from '@lib/api/console/session';

const stepUpMode = defineRoute({
  method: 'PUT',
  path: '/api/settings/step-up-mode',
  summary: "Change the step-up mode (needs the current mode's step-up; audited settings.step_up_mode)",
  access: 'operator',
  permission: 'settings.manage',
  stepUp: true,
  body: z.object({ mode: z.enum(STEP_UP_MODES) }),
  responses: { 200: stepUpModeChanged },
  errors: { 409: ['not_configured', 'settings_changed_concurrently'] },
  async handle({ rt, body, operator, sourceIp, correlationId }) {
    return { body: await updateStepUpMode(rt, body.mode, { id: operator!.guid, name: operator!.username, ip: sourceIp }, correlationId) };
  },
});

// Instance identification (console spec): title, accent colour, 'show on the sign-in page'.
const getBranding = defineRoute({
  method: 'GET',
  path: '/api/settings/branding',
  summary: "The instance identification: title (1 to 60 plain characters), accent colour, 'show on the sign-in page'",
  access: 'operator',
  permission: 'settings.manage',
  responses: { 200: branding },
  async handle({ rt }) {
    return { body: await readBranding(rt.store) };
  },
});

const putBranding = defineRoute({
  method: 'PUT',
  path: '/api/settings/branding',
  summary: 'Change the instance identification (step-up; audited settings.branding with old and new values)',
  access: 'operator',
  permission: 'settings.manage',
  stepUp: true,
  body: brandingInputSchema,
  refusalAudit: () => ({ event: 'settings.branding', target: { id: 'branding', kind: 'settings' } }),
  responses: { 200: branding },
  errors: { 409: ['version_conflict'] },
  async handle({ rt, body, operator, sourceIp, correlationId }) {
    const actor = { id: operator!.guid, name: operator!.username, provider: operator!.provider, ip: sourceIp };
    return { body: await saveBranding({ store: rt.store, audit: rt.audit, actor, correlationId }, body) };
  },
});

const signInBranding = defineRoute({
  method: 'GET',
  path: '/api/branding',
  summary: "What the sign-in page shows of the instance: its title and accent only when 'show on the sign-in page' is on, else {}",
  access: 'anonymous',
  responses: { 200: publicBrandingAnswer },
  async handle({ rt }) {
    return { body: await publicBranding(rt.store) };
  },
});

// issue 32: a discoverable passkey alone at sign-in (default off)
const passkeySignIn = defineRoute({
  method: 'PUT',
  path: '/api/settings/passkey-sign-in',
  summary: 'Allow or refuse the sign-in with a discoverable passkey alone (step-up; audited settings.passkey_sign_in)',
  access: 'operator',
  permission: 'settings.manage',
  stepUp: true,
  body: z.object({ allowed: z.boolean() }),
  responses: { 200: passkeySignInChanged },
  errors: { 409: ['not_configured', 'settings_changed_concurrently'] },
  async handle({ rt, body, operator, sourceIp, correlationId }) {
    return { body: await updatePasskeySignIn(rt, body.allowed, { id: operator!.guid, name: operator!.username, ip: sourceIp }, correlationId) };
  },
});

export const routes = [stepUpMode, getBranding, putBranding, signInBranding, passkeySignIn];
export const handler = consoleHandler(routes);
