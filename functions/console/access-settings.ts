import { z } from 'zod';
import { accessSettingsView, changeAccessOnly, mappingSetInput, saveAccessMappings } from '@lib/auth/access-settings';
import { consoleHandler } from '@lib/http/console';
import { defineRoute } from '@lib/http/route';
import { accessMappings, accessOnlyChanged, accessSettings } from '@lib/api/console/settings';

// Access-platform sign-in settings (console spec, Authentication 1, 3 and 6; Command-line operations).
const view = defineRoute({
  method: 'GET',
  path: '/api/settings/access',
  summary: 'Access-platform sign-in: configured on this host, the access-platform only mode, StepUp, AdAccountClaims and the role/trait mappings',
  access: 'operator',
  permission: 'settings.manage',
  responses: { 200: accessSettings },
  async handle({ rt }) {
    return { body: await accessSettingsView(rt) };
  },
});

const accessOnly = defineRoute({
  method: 'PUT',
  path: '/api/settings/access-only',
  summary: "Switch the access-platform only mode (the spec's 'Teleport only'): password sign-in refused while on; audited settings.teleport_only",
  access: 'operator',
  permission: 'settings.manage',
  stepUp: true,
  body: z.object({ enabled: z.boolean() }),
  responses: { 200: accessOnlyChanged },
  errors: { 409: ['access_signin_not_configured'] },
  async handle({ rt, body, operator, sourceIp, correlationId }) {
    return { body: await changeAccessOnly(rt, body.enabled, { actor: { id: operator!.guid, name: operator!.username, provider: operator!.provider, ip: sourceIp }, correlationId }) };
  },
});

const mappings = defineRoute({
  method: 'PUT',
  path: '/api/settings/access/mappings',
  summary: 'Replace the role/trait mappings (platform role or trait value → directory group DN or SID, resolved now; each group becomes protected); audited settings.access_mappings',
  access: 'operator',
  permission: 'settings.manage',
  stepUp: true,
  body: mappingSetInput,
  responses: { 200: accessMappings },
  errors: { 400: ['group_not_found', 'not_configured'], 409: ['settings_changed_concurrently'], 503: ['directory_unavailable'] },
  async handle({ rt, body, operator, sourceIp, correlationId }) {
    return { body: await saveAccessMappings(rt, body.mappings, { actor: { id: operator!.guid, name: operator!.username, provider: operator!.provider, ip: sourceIp }, correlationId }) };
  },
});

export const routes = [view, accessOnly, mappings];
export const handler = consoleHandler(routes);
