import { z } from 'zod';
import { adminContext } from '@lib/authz/admin';
import { baselineSchema, exportBaseline, importBaseline } from '@lib/authz/baseline';
import { consoleHandler } from '@lib/http/console';
import { defineRoute } from '@lib/http/route';

// The baseline: roles, delegations and approval settings carried between instances (no approvers).
const exportRoute = defineRoute({
  method: 'GET',
  path: '/api/admin/baseline',
  summary: 'Export roles, delegations (scope as OU paths below the domain root, assignees by name) and approval settings (actions and counts, never approvers); audited settings.baseline.export',
  access: 'operator',
  permission: 'settings.manage',
  async handle(c) {
    const baseline = await exportBaseline(adminContext(c));
    return { body: baseline, headers: { 'content-disposition': `attachment; filename="baseline-${baseline.source?.domain ?? 'console'}.json"` } };
  },
});

const importRoute = defineRoute({
  method: 'POST',
  path: '/api/admin/baseline/import',
  summary:
    'Import a baseline, all or nothing (400 baseline_invalid / 409 baseline_conflicts list every problem); existing roles and delegations replaced only with replace; dryRun reports without writing; audited settings.baseline.import',
  access: 'operator',
  permission: 'settings.manage',
  stepUp: true,
  body: z.object({ baseline: baselineSchema, replace: z.boolean().default(false), dryRun: z.boolean().default(false) }),
  refusalAudit: () => ({ event: 'settings.baseline.import', target: { id: 'baseline', kind: 'settings' } }),
  async handle(c) {
    return { body: await importBaseline(adminContext(c), c.body.baseline, { replace: c.body.replace, dryRun: c.body.dryRun }) };
  },
});

export const routes = [exportRoute, importRoute];
export const handler = consoleHandler(routes);
