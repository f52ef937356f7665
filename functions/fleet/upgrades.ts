import { fleetHandler } from '@lib/fleet/http';
import { defineFleetRoute } from '@lib/fleet/route';
import * as A from '@lib/api/fleet/answers';
import { file, HEADERS, json } from '@lib/http/answers';
import { changeUpgradeSettings, generateUpgradePack, packJson, packRequestSchema, packZip, upgradeSettingsSchema, upgradesView } from '@lib/fleet/upgrades';
import { authorizePackRequest } from '@lib/fleet/upgrades/guard';

// Console upgrades (fleet spec, "Console upgrades"): the target, plans and progress (scoped), the
// settings (administrators), and upgrade packs (administrators, or operators of each console's
// client). Logic in lib/fleet/upgrades.

const view = defineFleetRoute({
  method: 'GET',
  path: '/api/upgrades',
  summary: 'Target tag, settings, plans and progress (technicians: the plans of their clients)',
  access: 'signed-in',
  responses: { 200: A.upgrades },
  async handle({ rt, access }) {
    return { body: await upgradesView(rt, access!) };
  },
});

const settings = defineFleetRoute({
  method: 'PUT',
  path: '/api/upgrades/settings',
  summary: '{ targetTag, repository?, alertAfterDays? 1..365 (default 7) } (administrators; audited upgrades.settings)',
  access: 'admin',
  body: upgradeSettingsSchema,
  responses: { 200: A.upgradeSettings },
  async handle({ rt, body, actor, correlationId }) {
    return { body: await changeUpgradeSettings(rt, body, { actor, correlationId }) };
  },
});

const pack = defineFleetRoute({
  method: 'POST',
  path: '/api/upgrades/pack',
  summary: "{ consoleIds } or { allBehind: true }, format json|zip: commands per console, grouped by client; plans each upgrade (audited upgrade.planned); 409 nothing_to_upgrade, target_not_set",
  access: 'signed-in',
  body: packRequestSchema,
  authorize: authorizePackRequest,
  responses: { 200: [json(A.upgradePack, { description: 'format json: the commands per console, grouped by client' }), file('application/zip', 'format zip: the same as files', HEADERS.attachment)] },
  errors: { 404: ['not_found'], 409: ['nothing_to_upgrade', 'target_not_set'] },
  async handle({ rt, access, body, actor, correlationId }) {
    const p = await generateUpgradePack(rt, access!, body, { actor, correlationId });
    if (body.format === 'json') return { body: packJson(p) };
    return {
      binary: packZip(p),
      contentType: 'application/zip',
      headers: { 'content-disposition': `attachment; filename="console-upgrade-${p.target.tag}.zip"` },
    };
  },
});

export const routes = [view, settings, pack];
export const handler = fleetHandler(routes);
