import { z } from 'zod';
import { plainText } from '@lib/plain-text';
import { adminContext, deleteRole, listRolesView, saveRole } from '@lib/authz/admin';
import { consoleHandler } from '@lib/http/console';
import { defineRoute } from '@lib/http/route';
import { roleSaved, roles } from '@lib/api/console/admin';
import { AUTHZ_SAVE, ROLE_EDITOR } from '@lib/api/console/errors';
import { errorCodes, noContent } from '@lib/http/answers';

// Roles of the console: the built-in Super administrator (read-only) and custom roles.

const idParams = z.object({ id: z.string().min(1).max(200) });

const list = defineRoute({
  method: 'GET',
  path: '/api/admin/roles',
  summary: 'Roles: the built-in Super administrator (read-only, every permission) and the custom roles',
  access: 'operator',
  permission: 'settings.manage',
  responses: { 200: roles },
  async handle({ rt }) {
    return { body: await listRolesView(rt) };
  },
});

const put = defineRoute({
  method: 'PUT',
  path: '/api/admin/roles/{id}',
  summary: 'Create or replace a custom role (role editor rules; audited roles.saved)',
  access: 'operator',
  permission: 'settings.manage',
  stepUp: true,
  params: idParams,
  body: z.object({
    name: plainText().max(200),
    permissions: z.array(z.string().max(100)).max(100),
    version: z.number().int().min(0).optional(),
  }),
  responses: { 200: roleSaved, 201: roleSaved },
  errors: errorCodes(ROLE_EDITOR, AUTHZ_SAVE, { 409: ['role_name_taken'] }),
  async handle(ctx) {
    const out = await saveRole(adminContext(ctx), ctx.params.id, ctx.body);
    return { status: out.created ? 201 : 200, body: { role: out.role } };
  },
});

const remove = defineRoute({
  method: 'DELETE',
  path: '/api/admin/roles/{id}',
  summary: 'Delete a custom role not used by any delegation (audited roles.deleted)',
  access: 'operator',
  permission: 'settings.manage',
  stepUp: true,
  params: idParams,
  responses: { 204: noContent('Deleted') },
  errors: { 400: ['too_many_changes'], 403: ['role_read_only'], 409: ['authz_changed_concurrently', 'role_in_use'] },
  async handle(ctx) {
    await deleteRole(adminContext(ctx), ctx.params.id);
    return { status: 204 };
  },
});

export const routes = [list, put, remove];
export const handler = consoleHandler(routes);
