import { z } from 'zod';
import { plainText, multilineText } from '@lib/plain-text';
import { deleteOperator, listOperators, resetOperatorPasskeys, resetOperatorTotp } from '@lib/auth/operator-admin';
import { consoleHandler } from '@lib/http/console';
import { defineRoute, objectIdParams, type RouteContext } from '@lib/http/route';
import { addProtectedGroup, lapsAccountView, protectedGroupsView, removeProtectedGroup } from '@lib/setup/protection';
import { lapsAccount as lapsAccountAnswer, operatorDeleted, operators, protectedGroups as protectedGroupsAnswer, passkeysReset, protectedGroupsChanged, totpReset } from '@lib/api/console/admin';

// who may act on another operator's record: one who holds all their rights, a Super administrator's only by another
const OPERATOR_RECORD = { 403: ['operator_rights_not_held', 'own_account', 'super_administrator_required'], 503: ['directory_unavailable'] };
const PROTECTION = { 409: ['not_configured', 'settings_changed_concurrently'], 503: ['directory_unavailable'] };

// Operators administered by an administrator (console spec, Authentication 5), the protection
// list and the LAPS account shown read-only (Authentication 8).
const actorOf = ({ operator, sourceIp }: RouteContext) => ({ id: operator!.guid, name: operator!.username, provider: operator!.provider, ip: sourceIp });

const list = defineRoute({
  method: 'GET',
  path: '/api/admin/operators',
  summary: "Operator records: name, provider, subject, last sign-in, authenticator state, the directory account's state and the roles held now",
  access: 'operator',
  permission: 'settings.manage',
  responses: { 200: operators },
  errors: { 409: ['not_configured'], 503: ['directory_unavailable'] },
  async handle({ rt }) {
    return { body: await listOperators(rt) };
  },
});

const remove = defineRoute({
  method: 'DELETE',
  path: '/api/admin/operators/{id}',
  summary:
    "Delete an operator's record (id: objectGUID): authenticator cleared, sessions ended; the same rule as an authenticator reset; audited operators.deleted with name, provider, subject, roles",
  access: 'operator',
  permission: 'settings.manage',
  stepUp: true,
  params: objectIdParams,
  responses: { 200: operatorDeleted },
  errors: OPERATOR_RECORD,
  async handle(c) {
    const actor = actorOf(c);
    return { body: await deleteOperator({ rt: c.rt, actor, rights: c.rights!, correlationId: c.correlationId }, c.params.id) };
  },
});

const resetTotp = defineRoute({
  method: 'POST',
  path: '/api/admin/operators/{id}/totp/reset',
  summary:
    "Reset another operator's authenticator (id: objectGUID); only by one who holds all of that operator's console rights, a Super administrator's only by another; ends their sessions; audited operators.totp_reset",
  access: 'operator',
  permission: 'settings.manage',
  stepUp: true,
  params: objectIdParams,
  body: z.object({ reason: multilineText().trim().min(1).max(500) }),
  responses: { 200: totpReset },
  errors: { ...OPERATOR_RECORD, 409: ['no_authenticator'] },
  async handle(c) {
    return { body: await resetOperatorTotp({ rt: c.rt, actor: actorOf(c), rights: c.rights!, correlationId: c.correlationId }, c.params.id, c.body.reason) };
  },
});

const resetPasskeys = defineRoute({
  method: 'POST',
  path: '/api/admin/operators/{id}/passkeys/reset',
  summary:
    "Remove every passkey of another operator (id: objectGUID; recovery, issue 32); the same rule as an authenticator reset; ends their sessions; audited operators.passkeys_reset",
  access: 'operator',
  permission: 'settings.manage',
  stepUp: true,
  params: objectIdParams,
  body: z.object({ reason: multilineText().trim().min(1).max(500) }),
  responses: { 200: passkeysReset },
  errors: { ...OPERATOR_RECORD, 409: ['no_passkey'] },
  async handle(c) {
    return { body: await resetOperatorPasskeys({ rt: c.rt, actor: actorOf(c), rights: c.rights!, correlationId: c.correlationId }, c.params.id, c.body.reason) };
  },
});

const protectedGroups = defineRoute({
  method: 'GET',
  path: '/api/admin/protected-groups',
  summary: 'The protection list: groups whose members are VIP (current DN followed by objectGUID)',
  access: 'operator',
  permission: 'settings.manage',
  responses: { 200: protectedGroupsAnswer },
  errors: PROTECTION,
  async handle({ rt }) {
    return { body: await protectedGroupsView(rt) };
  },
});

const addGroup = defineRoute({
  method: 'POST',
  path: '/api/admin/protected-groups',
  summary: 'Add a security group (DN, sAMAccountName or objectGUID) to the protection list; audited settings.protected_groups',
  access: 'operator',
  permission: 'settings.manage',
  stepUp: true,
  body: z.object({ group: plainText().trim().min(1).max(1024) }),
  refusalAudit: () => ({ event: 'settings.protected_groups', target: { kind: 'protected_group' } }),
  responses: { 201: protectedGroupsChanged },
  errors: { 400: ['group_not_found', 'group_not_security_group'], 409: ['already_protected', 'not_configured', 'settings_changed_concurrently'], 503: ['directory_unavailable'] },
  async handle(c) {
    return { status: 201, body: await addProtectedGroup({ rt: c.rt, actor: actorOf(c), correlationId: c.correlationId }, c.body.group) };
  },
});

const removeGroup = defineRoute({
  method: 'DELETE',
  path: '/api/admin/protected-groups/{id}',
  summary: 'Remove a group (objectGUID) from the protection list; audited settings.protected_groups',
  access: 'operator',
  permission: 'settings.manage',
  stepUp: true,
  params: objectIdParams,
  responses: { 200: protectedGroupsChanged },
  errors: PROTECTION,
  async handle(c) {
    return { body: await removeProtectedGroup({ rt: c.rt, actor: actorOf(c), correlationId: c.correlationId }, c.params.id) };
  },
});

const lapsAccount = defineRoute({
  method: 'GET',
  path: '/api/admin/laps-account',
  summary: 'The LAPS account, read-only: its UPN (set on the host; its password never reaches the console)',
  access: 'operator',
  permission: 'settings.manage',
  responses: { 200: lapsAccountAnswer },
  async handle({ rt }) {
    return { body: await lapsAccountView(rt) };
  },
});

export const routes = [list, remove, resetTotp, resetPasskeys, protectedGroups, addGroup, removeGroup, lapsAccount];
export const handler = consoleHandler(routes);
