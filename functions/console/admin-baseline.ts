import { z } from 'zod';
import { adminContext } from '@lib/authz/admin';
import { baselineSchema, exportBaseline, importBaseline } from '@lib/authz/baseline';
import { consoleHandler } from '@lib/http/console';
import { defineRoute } from '@lib/http/route';
import { baseline as baselineAnswer, baselineImported } from '@lib/api/console/admin';
import { AUTHZ_SAVE, DELEGATION_EDITOR, ROLE_EDITOR } from '@lib/api/console/errors';
import { errorCodes, HEADERS, json } from '@lib/http/answers';

// The baseline: roles, delegations and approval settings carried between instances (no approvers).
const exportRoute = defineRoute({
  method: 'GET',
  path: '/api/admin/baseline',
  longRead: true,
  summary: 'Export roles, delegations (scope as OU paths below the domain root, assignees by name) and approval settings (actions and counts, never approvers); audited settings.baseline.export',
  access: 'operator',
  permission: 'settings.manage',
  responses: { 200: json(baselineAnswer, { headers: HEADERS.attachment }) },
  errors: { 409: ['not_configured'], 503: ['directory_unavailable'] },
  async handle(c) {
    const baseline = await exportBaseline(adminContext(c));
    // the type is the import schema's (roles checked one by one there); an export writes them whole
    return { body: baseline as z.input<typeof baselineAnswer>, headers: { 'content-disposition': `attachment; filename="baseline-${baseline.source?.domain ?? 'console'}.json"` } };
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
  responses: { 200: baselineImported },
  errors: errorCodes(ROLE_EDITOR, DELEGATION_EDITOR, AUTHZ_SAVE, { 400: ['assignee_kind_mismatch', 'baseline_invalid', 'duplicate_role', 'invalid_import_file'], 409: ['baseline_conflicts'] }),
  async handle(c) {
    return { body: await importBaseline(adminContext(c), c.body.baseline, { replace: c.body.replace, dryRun: c.body.dryRun }) };
  },
});

export const routes = [exportRoute, importRoute];
export const handler = consoleHandler(routes);
