import { randomUUID } from 'node:crypto';
import type { NotificationEvent } from '../channels';
import { logger } from '../log';
import { deliverNotification, type NotificationKind } from '../notifications';
import type { ConsoleRuntime } from '../runtime';
import type { ApprovalRequest } from './record';
import { readApprovalSettings } from './settings';

// What an approval notification says (console spec, Notifications), built here and handed to
// lib/notifications, which only delivers: approvals call notifications, never the other way.
// The deep link opens the request in the console app: the approval settings' `consoleUrl` when
// an administrator set one, else the console's public URL (Hosting:PublicOrigin); without
// either the webhook keeps a relative path and the human kinds carry no link.

/**
 * `<consoleUrl>/approvals/<id>` under the console's base path: a console served at
 * https://host/hdc links to https://host/hdc/approvals/<id> (URL resolution of an absolute path
 * would drop /hdc). Query and fragment of the setting are not part of the base.
 */
export function approvalLink(consoleUrl: string | undefined, path: string): string {
  if (!consoleUrl) return path;
  const base = new URL(consoleUrl);
  return `${base.origin}${base.pathname.replace(/\/+$/, '')}${path}`;
}

/** The payload of a notification: what the request is, and a link that opens it in the SPA. */
export function notificationPayload(kind: NotificationKind, r: ApprovalRequest, consoleUrl: string | undefined) {
  const path = `/approvals/${encodeURIComponent(r.id)}`;
  return {
    id: randomUUID(),
    kind,
    sentAt: new Date().toISOString(),
    request: {
      id: r.id,
      kind: r.kind,
      action: r.action,
      state: r.state,
      ...(r.outcome ? { outcome: r.outcome } : {}),
      target: { kind: r.target.kind, name: r.target.name },
      requester: r.requester.username,
      reason: r.reason,
      ...(r.ticket ? { ticket: r.ticket } : {}),
      approvalsNeeded: r.approvalsNeeded,
      approvals: r.approvals.map((a) => a.username),
      approvers: r.approvers,
      createdAt: r.createdAt,
      expiresAt: r.expiresAt,
      ...(r.closedBy ? { closedBy: r.closedBy.username } : {}),
    },
    link: approvalLink(consoleUrl, path),
  };
}

export function notificationEvents(kind: NotificationKind, p: ReturnType<typeof notificationPayload>): NotificationEvent[] {
  const r = p.request;
  const what = kind === 'approval_requested' ? `Approval requested: ${r.action} on ${r.target.name} by ${r.requester}` : `Request ${r.state}${r.outcome ? ` (${r.outcome})` : ''}: ${r.action} on ${r.target.name}`;
  return [
    {
      event: kind,
      severity: 'info',
      text: what,
      ...(/^https:\/\//.test(p.link) ? { link: p.link } : {}),
      facts: [{ title: 'Reason', value: r.reason }, ...(r.ticket ? [{ title: 'Ticket', value: r.ticket }] : []), { title: 'Approvals', value: `${r.approvals.length}/${r.approvalsNeeded}` }, { title: 'Expires', value: r.expiresAt }],
    },
  ];
}

/** Never fails the transition that notifies: a problem is logged by its name only. */
export async function notify(rt: ConsoleRuntime, kind: NotificationKind, r: ApprovalRequest): Promise<void> {
  try {
    const { settings } = await readApprovalSettings(rt.store);
    const payload = notificationPayload(kind, r, settings.consoleUrl ?? rt.config.Hosting.PublicOrigin);
    await deliverNotification(rt, kind, payload, notificationEvents(kind, payload), { request: r.id });
  } catch (e) {
    logger.error('notification_failed', { kind, request: r.id, error: (e as Error).name });
  }
}
