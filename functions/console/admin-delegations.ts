import { z } from 'zod';
import { plainText } from '@lib/plain-text';
import { adminContext, deleteDelegation, listDelegationsView, saveDelegation } from '@lib/authz/admin';
import { exportDelegation } from '@lib/delegation';
import { notFound } from '@lib/errors';
import { consoleHandler } from '@lib/http/console';
import { defineRoute } from '@lib/http/route';
import { delegationExports, delegationSaved, delegations } from '@lib/api/console/admin';
import { AUTHZ_SAVE, DELEGATION_EDITOR } from '@lib/api/console/errors';
import { errorCodes, file, noContent } from '@lib/http/answers';

// building the export reads the directory's schema and the identities the models name
const EXPORT_ERRORS = { 400: ['laps_identity_upn_missing', 'laps_right_refused', 'bitlocker_right_refused'], 409: ['delegation_identity_not_found', 'schema_name_unknown'], 503: ['directory_unavailable', 'not_configured'] };

// Delegations: a role, a scope of managed OUs, assigned to directory users or groups.
const idParams = z.object({ id: z.string().min(1).max(200) });
const ref = plainText().trim().min(1).max(1024);

const list = defineRoute({
  method: 'GET',
  path: '/api/admin/delegations',
  summary: 'Delegations with their resolved scope OUs and assignees',
  access: 'operator',
  permission: 'settings.manage',
  responses: { 200: delegations },
  async handle({ rt }) {
    return { body: await listDelegationsView(rt) };
  },
});

const put = defineRoute({
  method: 'PUT',
  path: '/api/admin/delegations/{id}',
  summary: 'Create or replace a delegation: scope OUs (DN or GUID) inside the managed OUs, assignees (DN, sAMAccountName or GUID); audited delegations.saved',
  access: 'operator',
  permission: 'settings.manage',
  stepUp: true,
  params: idParams,
  body: z.object({
    roleId: z.string().min(1).max(200),
    scope: z.array(ref).min(1).max(50),
    assignees: z.array(ref).min(1).max(100),
    version: z.number().int().min(0).optional(),
  }),
  responses: { 200: delegationSaved, 201: delegationSaved },
  errors: errorCodes(DELEGATION_EDITOR, AUTHZ_SAVE),
  async handle(ctx) {
    const out = await saveDelegation(adminContext(ctx), ctx.params.id, ctx.body);
    return { status: out.created ? 201 : 200, body: { delegation: out.delegation } };
  },
});

const remove = defineRoute({
  method: 'DELETE',
  path: '/api/admin/delegations/{id}',
  summary: 'Delete a delegation (audited delegations.deleted)',
  access: 'operator',
  permission: 'settings.manage',
  stepUp: true,
  params: idParams,
  responses: { 204: noContent('Deleted') },
  errors: { 400: ['too_many_changes'], 409: ['authz_changed_concurrently'] },
  async handle(ctx) {
    await deleteDelegation(adminContext(ctx), ctx.params.id);
    return { status: 204 };
  },
});

const exportModels = defineRoute({
  method: 'GET',
  path: '/api/admin/delegation-export',
  longRead: true,
  summary: "Delegation export: the write account's and the LAPS account's rights models (SDDL per OU), their PowerShell scripts and whether the directory holds them (status.upToDate)",
  access: 'operator',
  permission: 'settings.manage',
  responses: { 200: delegationExports },
  errors: EXPORT_ERRORS,
  async handle({ rt }) {
    const { settings, directory } = await rt.settingsAndDirectory();
    return { body: { exports: await exportDelegation(rt.store, settings, directory!, { bitlockerUpn: rt.config.Helpdesk.BitlockerIdentityUpn }) } };
  },
});

const exportScript = defineRoute({
  method: 'GET',
  path: '/api/admin/delegation-export/{kind}',
  longRead: true,
  summary: 'One delegation script (kind write, laps or bitlocker) as a PowerShell file: run with -ManagedOu and -Identity matching the model and -ModelDigest the digest the console shows (also in the X-Model-Digest header)',
  access: 'operator',
  permission: 'settings.manage',
  params: z.object({ kind: z.enum(['write', 'laps', 'bitlocker']) }),
  responses: {
    200: file('text/plain', 'The PowerShell script', {
      'Content-Disposition': { description: 'attachment; filename="hdc-<kind>-rights.ps1"', required: true },
      'X-Model-Digest': { description: "the SHA-256 of the script's model, its -ModelDigest", required: true },
    }),
  },
  errors: EXPORT_ERRORS,
  async handle({ rt, params }) {
    const { settings, directory } = await rt.settingsAndDirectory();
    const found = (await exportDelegation(rt.store, settings, directory!, { bitlockerUpn: rt.config.Helpdesk.BitlockerIdentityUpn })).find((e) => e.kind === params.kind);
    if (!found) throw notFound();
    return { text: found.script, contentType: 'text/plain; charset=utf-8', headers: { 'content-disposition': `attachment; filename="hdc-${params.kind}-rights.ps1"`, 'x-model-digest': found.modelDigest } };
  },
});

export const routes = [list, put, remove, exportModels, exportScript];
export const handler = consoleHandler(routes);
