import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import type { ApprovalRequest } from '../../../lib/approvals/requests';
import { approvalLink, notificationPayload } from '../../../lib/approvals/notify';
import { signWebhook, standardWebhookKey } from '../../../lib/channels/render';

// The notification webhook's body faces the receiver: for any request content it is JSON that
// reads back as the payload, its signature verifies over the exact bytes sent, it carries neither
// the parameters, the DN, the comment nor the result of the request, and its link stays under the
// console's address (base path included).

const text = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.constantFrom('\ud800', '\u2028', '</script>', '"}],"x":"', '\u0000'));
const ref = fc.record({ guid: fc.uuid(), username: text });
const SECRET_MARK = 'NEVER-IN-PAYLOAD';
const requestArb = fc.record({
  id: fc.stringMatching(/^[0-9a-z]{9}-[0-9a-f]{16}$/), // ids are the server's own (requests.ts)
  kind: fc.constantFrom('action', 'bulk', 'leaver'),
  action: fc.constantFrom('users.unlock', 'users.reset_password', 'groups.members', 'roles.save'),
  state: fc.constantFrom('pending', 'executed', 'rejected', 'cancelled', 'expired'),
  reason: text,
  ticket: fc.option(text, { nil: undefined }),
  target: fc.record({ id: text, kind: fc.constantFrom('user', 'group', 'role', 'delegation'), name: text, dn: fc.constant(`CN=${SECRET_MARK},DC=corp`) }),
  parameters: fc.constant({ value: SECRET_MARK }),
  requester: fc.record({ guid: fc.uuid(), username: text, provider: fc.constant('ad') }),
  source: fc.constant('console'),
  approvers: fc.record({ roles: fc.array(text, { maxLength: 3 }), operators: fc.array(fc.uuid(), { maxLength: 3 }) }),
  approvalsNeeded: fc.constantFrom(1, 2),
  approvals: fc.array(fc.record({ guid: fc.uuid(), username: text, at: fc.constant('2026-01-01T00:00:00.000Z') }), { maxLength: 2 }),
  createdAt: fc.constant('2026-01-01T00:00:00.000Z'),
  expiresAt: fc.constant('2026-01-02T00:00:00.000Z'),
  correlationId: fc.uuid(),
  closedBy: fc.option(ref, { nil: undefined }),
  comment: fc.constant(SECRET_MARK),
  outcome: fc.option(fc.constantFrom('succeeded', 'failed', 'partial'), { nil: undefined }),
  result: fc.constant({ code: SECRET_MARK }),
}) as unknown as fc.Arbitrary<ApprovalRequest>;

const consoleUrl = fc.oneof(
  fc.constant(undefined),
  fc.webUrl({ validSchemes: ['https', 'http'], withQueryParameters: true, withFragments: true }),
  fc.constantFrom('https://hdc.example/', 'https://corp.example/hdc', 'https://corp.example/hdc/', 'https://corp.example/a/b//', 'http://127.0.0.1:3000'),
);

describe('fuzz: notification webhook payloads', () => {
  it('are JSON that reads back as sent, signed over the bytes sent, without parameters, DN, comment or result', () => {
    fc.assert(
      fc.property(fc.constantFrom('approval_requested', 'approval_decided') as fc.Arbitrary<'approval_requested' | 'approval_decided'>, requestArb, consoleUrl, fc.string({ minLength: 32 }), (kind, r, url, secret) => {
        const payload = notificationPayload(kind, r, url);
        const body = JSON.stringify(payload);
        expect(JSON.parse(body)).toEqual(JSON.parse(JSON.stringify(payload)));
        expect(body).not.toContain(SECRET_MARK);
        const h = signWebhook('standard', secret, body);
        expect(h['webhook-signature']).toBe(`v1,${createHmac('sha256', standardWebhookKey(secret)).update(Buffer.from(`${h['webhook-id']}.${h['webhook-timestamp']}.${body}`, 'utf8')).digest('base64')}`);
      }),
      { numRuns: 150 },
    );
  });

  it('link to the request under the console address, its base path kept', () => {
    fc.assert(
      fc.property(requestArb, consoleUrl, (r, url) => {
        const { link } = notificationPayload('approval_requested', r, url);
        const path = `/approvals/${encodeURIComponent(r.id)}`;
        if (!url) return link === path;
        const base = new URL(url);
        return link === `${base.origin}${base.pathname.replace(/\/+$/, '')}${path}` && link.startsWith(base.origin + '/');
      }),
      { numRuns: 300 },
    );
    // regression: new URL('/approvals/x', 'https://corp.example/hdc') dropped /hdc
    expect(approvalLink('https://corp.example/hdc', '/approvals/x')).toBe('https://corp.example/hdc/approvals/x');
    expect(approvalLink('https://corp.example/hdc/', '/approvals/x')).toBe('https://corp.example/hdc/approvals/x');
    expect(approvalLink('https://hdc.example/', '/approvals/x')).toBe('https://hdc.example/approvals/x');
    expect(approvalLink('https://hdc.example/?a=1#f', '/approvals/x')).toBe('https://hdc.example/approvals/x');
  });
});
