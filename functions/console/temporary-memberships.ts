import { z } from 'zod';
import { endTemporaryMembership, listTemporaryMemberships } from '@lib/approvals/requests';
import { approvalsContext } from '@lib/approvals/context';
import { defineRoute } from '@lib/http/route';
import * as A from '@lib/api/console/approvals';

// Temporary group memberships (issue 33): the caller's list and the requester's early end. Served
// by the approvals function (functions/console/approvals.ts): a membership is an executed request.

const temporaryMemberships = defineRoute({
  method: 'GET',
  path: '/api/temporary-memberships',
  summary: 'The caller’s temporary group memberships (groups.members.add.temporary, executed): those they asked for or hold, active first with their expiry, then the last ended ones',
  access: 'operator',
  responses: { 200: A.temporaryMembershipList },
  async handle(c) {
    return { body: await listTemporaryMemberships(await approvalsContext(c)) };
  },
});

const endMembership = defineRoute({
  method: 'POST',
  path: '/api/temporary-memberships/{id}/end',
  summary: 'End a temporary membership before its expiry (its requester; {id} is the request): the member is removed, audited groups.members.removed with reason ended_early',
  access: 'operator',
  params: z.object({ id: z.string().max(64) }),
  responses: { 200: A.temporaryMembershipEnded },
  errors: A.END_MEMBERSHIP_ERRORS,
  async handle(c) {
    return { body: await endTemporaryMembership(await approvalsContext(c), c.params.id) };
  },
});

export const temporaryMembershipRoutes = [temporaryMemberships, endMembership];
