import { z } from 'zod';
import { resetOperatorTotp } from '@lib/auth/operator-admin';
import { consoleHandler } from '@lib/http/console';
import { defineRoute, objectIdParams } from '@lib/http/route';

// Operators administered by an administrator (console spec, Authentication 5).
const resetTotp = defineRoute({
  method: 'POST',
  path: '/api/admin/operators/{id}/totp/reset',
  summary:
    "Reset another operator's authenticator (id: objectGUID); only by one who holds all of that operator's console rights, a Super administrator's only by another; ends their sessions; audited operators.totp_reset",
  access: 'operator',
  permission: 'settings.manage',
  stepUp: true,
  params: objectIdParams,
  body: z.object({ reason: z.string().trim().min(1).max(500) }),
  async handle({ rt, operator, rights, params, body, sourceIp, correlationId }) {
    const actor = { id: operator!.guid, name: operator!.username, provider: operator!.provider, ip: sourceIp };
    return { body: await resetOperatorTotp({ rt, actor, rights: rights!, correlationId }, params.id, body.reason) };
  },
});

export const routes = [resetTotp];
export const handler = consoleHandler(routes);
