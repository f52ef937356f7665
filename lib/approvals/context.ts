import type { RouteContext } from '../http/route';
import { decisionContext } from '../runtime';
import type { ApprovalsContext } from './record';

/** What the approvals routes hand to lib/approvals: the runtime, a decision context, the caller. */
export const approvalsContext = async (c: RouteContext): Promise<ApprovalsContext> => ({
  rt: c.rt,
  dc: await decisionContext(c.rt),
  actor: { identity: c.operator!, rights: c.rights!, ip: c.sourceIp },
  session: c.session,
  correlationId: c.correlationId,
});
