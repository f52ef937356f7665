import { z } from 'zod';
import { plainText } from '@lib/plain-text';
import { adminContext, deleteRole, listRolesView, saveRole } from '@lib/authz/admin';
import { consoleHandler } from '@lib/http/console';
import { defineRoute } from '@lib/http/route';

// Roles of the console: the built-in Super administrator (read-only) and custom roles.

const idParams = z.object({ id: z.string().min(1).max(200) });

const list = defineRoute({
  method: 'GET',
  path: '/api/admin/roles',
  summary: 'Roles: the built-in Super administrator (read-only, every permission) and the custom roles',
  access: 'operator',
  permission: 'settings.manage',
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
  async handle(ctx) {
    await deleteRole(adminContext(ctx), ctx.params.id);
    return { status: 204 };
  },
});

export const routes = [list, put, remove];
export const handler = consoleHandler(routes);
