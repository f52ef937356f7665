import { z } from 'zod';
import { plainText } from '@lib/plain-text';
import { adminContext } from '@lib/authz/admin';
import { grantSuperAdministrator, listSuperAdministrators, revokeSuperAdministrator } from '@lib/authz/super-administrators';
import { isGuid } from '@lib/directory/guid';
import { consoleHandler } from '@lib/http/console';
import { defineRoute } from '@lib/http/route';
import { superAdministratorGranted, superAdministrators } from '@lib/api/console/admin';
import { noContent } from '@lib/http/answers';

// Holders of the built-in Super administrator role; only a Super administrator changes them.
const list = defineRoute({
  method: 'GET',
  path: '/api/admin/super-administrators',
  summary: 'Holders of the built-in Super administrator role',
  access: 'operator',
  permission: 'settings.manage',
  responses: { 200: superAdministrators },
  errors: { 409: ['not_configured'], 503: ['directory_unavailable'] },
  async handle({ rt }) {
    return { body: await listSuperAdministrators(rt) };
  },
});

const grant = defineRoute({
  method: 'POST',
  path: '/api/admin/super-administrators',
  summary: 'Grant the Super administrator role to a directory user (sAMAccountName or GUID); Super administrators only; audited super_administrator:granted',
  access: 'operator',
  permission: 'settings.manage',
  stepUp: true,
  body: z.object({ operator: plainText().trim().min(1).max(256) }),
  responses: { 201: superAdministratorGranted },
  errors: { 400: ['operator_disabled', 'operator_not_found'], 403: ['super_administrator_required'], 409: ['already_super_administrator', 'not_configured', 'settings_changed_concurrently'], 503: ['directory_unavailable'] },
  async handle(ctx) {
    return { status: 201, body: { superAdministrator: await grantSuperAdministrator(adminContext(ctx), ctx.rights, ctx.body.operator) } };
  },
});

const revoke = defineRoute({
  method: 'DELETE',
  path: '/api/admin/super-administrators/{guid}',
  summary: 'Revoke the Super administrator role (never the last usable holder); Super administrators only; audited super_administrator:revoked',
  access: 'operator',
  permission: 'settings.manage',
  stepUp: true,
  params: z.object({ guid: z.string().refine(isGuid) }),
  responses: { 204: noContent('Revoked') },
  errors: { 403: ['super_administrator_required'], 409: ['last_super_administrator', 'not_configured', 'settings_changed_concurrently'], 503: ['directory_unavailable'] },
  async handle(ctx) {
    await revokeSuperAdministrator(adminContext(ctx), ctx.rights, ctx.params.guid);
    return { status: 204 };
  },
});

export const routes = [list, grant, revoke];
export const handler = consoleHandler(routes);
