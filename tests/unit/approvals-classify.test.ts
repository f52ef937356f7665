import { createHmac } from 'node:crypto';
import { approversFor, approvalSettingsSchema, isNamedApprover, DEFAULT_APPROVAL_SETTINGS } from '../../lib/approvals/settings';
import { classifyGroup, classifyUser, type ClassificationContext } from '../../lib/authz/classify';
import type { OperatorRights } from '../../lib/authz/rights';
import { notificationPayload } from '../../lib/approvals/notify';
import { signWebhook } from '../../lib/channels';
import { generatePassword } from '../../lib/password-service/service-side/reset';
import { actionParamsSchema } from '../../lib/actions';

const DOM = 'S-1-5-21-1-2-3';
const ctx: ClassificationContext = {
  managedOuDns: ['OU=Managed,DC=x'],
  tierOuDns: ['OU=Tier0,OU=Managed,DC=x'],
  protectedGroupSids: [`${DOM}-2001`],
};
const user = (over: Record<string, unknown> = {}) => ({
  dn: 'CN=u,OU=Users,OU=Managed,DC=x',
  objectClasses: ['top', 'person', 'organizationalPerson', 'user'],
  userAccountControl: 512,
  primaryGroupId: 513,
  tokenGroups: [`${DOM}-513`],
  memberOf: [],
  sid: `${DOM}-1500`,
  samAccountName: 'u',
  ...over,
});

describe('classifyUser', () => {
  it('standard, VIP, unmanaged', () => {
    expect(classifyUser(user(), ctx)).toEqual({ kind: 'standard' });
    expect(classifyUser(user({ tokenGroups: [`${DOM}-513`, `${DOM}-2001`] }), ctx)).toEqual({ kind: 'vip' });
    expect(classifyUser(user({ dn: 'CN=u,OU=Staff,DC=x' }), ctx)).toEqual({ kind: 'unmanaged' });
  });
  it('never: built-in and well-known accounts, critical objects, privileged, tier, not a user, missing signals', () => {
    const never = (o: Record<string, unknown>) => classifyUser(user(o), ctx);
    expect(never({ sid: `${DOM}-500` })).toEqual({ kind: 'never', why: 'builtin_account' });
    expect(never({ samAccountName: 'krbtgt' })).toEqual({ kind: 'never', why: 'builtin_account' });
    expect(never({ samAccountName: 'Guest' })).toEqual({ kind: 'never', why: 'builtin_account' });
    expect(never({ criticalSystemObject: true })).toEqual({ kind: 'never', why: 'critical_system_object' });
    expect(never({ adminCount: 1 })).toEqual({ kind: 'never', why: 'admin_count' });
    expect(never({ tokenGroups: [`${DOM}-513`, `${DOM}-512`], memberOf: ['CN=Domain Admins,CN=Users,DC=x'] })).toEqual({ kind: 'never', why: 'sensitive_group_direct' });
    expect(never({ tokenGroups: [`${DOM}-513`, 'S-1-5-32-549'] })).toEqual({ kind: 'never', why: 'sensitive_group_nested' });
    expect(never({ dn: 'CN=u,OU=Tier0,OU=Managed,DC=x' })).toEqual({ kind: 'never', why: 'tier0_ou' });
    expect(never({ objectClasses: ['user', 'computer'] })).toEqual({ kind: 'never', why: 'not_a_user' });
    expect(never({ tokenGroups: undefined })).toEqual({ kind: 'never', why: 'signal_missing' });
    expect(never({ sid: undefined })).toEqual({ kind: 'never', why: 'signal_missing' });
  });
});

describe('classifyGroup', () => {
  const group = (over: Record<string, unknown> = {}) => ({ dn: 'CN=g,OU=Groups,OU=Managed,DC=x', objectClasses: ['top', 'group'], sid: `${DOM}-3000`, parentSids: [], ...over });
  it('standard, VIP (itself or nested), never (built-in, sensitive, nested sensitive, adminCount, missing parents)', () => {
    expect(classifyGroup(group(), ctx)).toEqual({ kind: 'standard' });
    expect(classifyGroup(group({ sid: `${DOM}-2001` }), ctx)).toEqual({ kind: 'vip' });
    expect(classifyGroup(group({ parentSids: [`${DOM}-2001`] }), ctx)).toEqual({ kind: 'vip' });
    expect(classifyGroup(group({ sid: `${DOM}-512` }), ctx)).toMatchObject({ kind: 'never', why: 'builtin_account' });
    expect(classifyGroup(group({ sid: 'S-1-5-32-549' }), ctx)).toMatchObject({ kind: 'never', why: 'builtin_account' });
    expect(classifyGroup(group({ parentSids: ['S-1-5-32-549'] }), ctx)).toEqual({ kind: 'never', why: 'sensitive_group_nested' });
    expect(classifyGroup(group({ adminCount: 1 }), ctx)).toEqual({ kind: 'never', why: 'admin_count' });
    expect(classifyGroup(group({ parentSids: undefined }), ctx)).toEqual({ kind: 'never', why: 'signal_missing' });
    expect(classifyGroup(group({ objectClasses: ['user'] }), ctx)).toEqual({ kind: 'never', why: 'not_a_group' });
  });
});

describe('approval settings', () => {
  const rights = (o: Partial<OperatorRights> & { roles?: string[] } = {}): OperatorRights => ({
    superAdministrator: o.superAdministrator ?? false,
    permissions: new Set(),
    grants: (o.roles ?? []).map((id) => ({ role: { id, name: id, permissions: [] }, delegation: { id: `${id}-d`, roleId: id, scope: [], assignees: [] } })),
  });
  it('defaults and limits', () => {
    expect(DEFAULT_APPROVAL_SETTINGS).toMatchObject({ requestLifetimeDays: 7, alwaysRequire: [], instanceApprovalsNeeded: 1 });
    expect(approvalSettingsSchema.safeParse({ requestLifetimeDays: 0 }).success).toBe(false);
    expect(approvalSettingsSchema.safeParse({ requestLifetimeDays: 90 }).success).toBe(true);
    expect(approvalSettingsSchema.safeParse({ instanceApprovalsNeeded: 3 }).success).toBe(false);
    expect(approvalSettingsSchema.safeParse({ alwaysRequire: ['computers.laps.read'] }).success).toBe(false);
  });
  it('approvers: the delegation’s when named, else the instance’s, else the Super administrators', () => {
    const s = approvalSettingsSchema.parse({
      instanceApprovalsNeeded: 2,
      delegations: { a: { requiresApproval: ['users.unlock'], approvers: { roles: ['approver'] }, approvalsNeeded: 1 }, b: { requiresApproval: ['users.unlock'] } },
    });
    expect(approversFor(s, { kind: 'delegation', delegationId: 'a' })).toEqual({ approvers: { roles: ['approver'], operators: [] }, approvalsNeeded: 1 });
    expect(approversFor(s, { kind: 'delegation', delegationId: 'b' })).toEqual({ approvers: { roles: ['super-administrator'], operators: [] }, approvalsNeeded: 2 });
    expect(approversFor(s, { kind: 'always' }).approvers.roles).toEqual(['super-administrator']);
    const a = { roles: ['super-administrator', 'approver'], operators: ['AAAA'] };
    expect(isNamedApprover(a, { guid: 'aaaa' }, rights())).toBe(true);
    expect(isNamedApprover(a, { guid: 'b' }, rights({ superAdministrator: true }))).toBe(true);
    expect(isNamedApprover(a, { guid: 'b' }, rights({ roles: ['approver'] }))).toBe(true);
    expect(isNamedApprover(a, { guid: 'b' }, rights({ roles: ['helpdesk'] }))).toBe(false);
  });
});

describe('request parameters', () => {
  it('are captured without a typed password', () => {
    const p = actionParamsSchema.parse({ action: 'users.password.reset', password: 'Typed!', newPassword: 'x' });
    expect(p).toEqual({ action: 'users.password.reset', mustChange: true, unlock: false });
    expect(actionParamsSchema.safeParse({ action: 'users.attributes.write', attributes: { unicodePwd: 'x' } }).success).toBe(false);
    expect(actionParamsSchema.safeParse({ action: 'users.move' }).success).toBe(false);
  });
});

describe('generated passwords', () => {
  it('20 characters from four classes, all different', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const p = generatePassword();
      expect(p).toHaveLength(20);
      expect(p).toMatch(/[A-Z]/);
      expect(p).toMatch(/[a-z]/);
      expect(p).toMatch(/[0-9]/);
      expect(p).toMatch(/[!#%+\-=?@_]/);
      seen.add(p);
    }
    expect(seen.size).toBe(200);
  });
});

describe('webhook signature and payload', () => {
  it('Standard Webhooks: HMAC-SHA256 over id, timestamp and raw body; the link opens the request in the SPA', () => {
    const body = '{"a":1}';
    const h = signWebhook('standard', 's3cret', body, 1_700_000_000_000);
    expect(h['webhook-timestamp']).toBe('1700000000');
    expect(h['webhook-signature']).toBe(`v1,${createHmac('sha256', 's3cret').update(`${h['webhook-id']}.1700000000.${body}`).digest('base64')}`);
    const req: any = {
      id: 'abc', kind: 'action', action: 'users.unlock', state: 'pending', target: { kind: 'user', name: 'dave', id: 'g', dn: 'CN=dave' }, requester: { username: 'op' },
      reason: 'r', approvalsNeeded: 1, approvals: [], approvers: { roles: [], operators: [] }, createdAt: 'x', expiresAt: 'y', parameters: { action: 'users.unlock' },
    };
    const p = notificationPayload('approval_requested', req, 'https://hdc.example/');
    expect(p).toMatchObject({ kind: 'approval_requested', link: 'https://hdc.example/approvals/abc', request: { id: 'abc', requester: 'op', target: { kind: 'user', name: 'dave' } } });
    expect(JSON.stringify(p)).not.toContain('CN=dave');
  });
});
