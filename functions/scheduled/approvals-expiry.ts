import { expireRequests, expireTemporaryMemberships, resumeJobs } from '@lib/approvals/requests';
import { decisionContext, runtime } from '@lib/runtime';

// Every Approvals:CheckInterval (5 minutes): pending requests past their lifetime become expired
// (`request.expired`); bulk and leaver jobs whose runner is gone are resumed as their approver;
// temporary group memberships past their expiry are removed, failed removals retried (issue 33).
// Idempotent; two runs at once expire each request once, run each job step once, end each membership once.
export async function handler() {
  const rt = runtime();
  const expiry = await expireRequests(rt);
  const dc = rt.settings().then((s) => (s ? decisionContext(rt) : undefined));
  const jobs = dc.then((d) => (d ? resumeJobs(rt, d) : { resumed: 0, closed: 0 }));
  const memberships = dc.then((d) => (d ? expireTemporaryMemberships(rt, d) : { removed: 0, removedByHand: 0, failed: 0 }));
  const [j, m] = await Promise.all([jobs, memberships]);
  return { ...expiry, ...j, temporaryMemberships: m };
}
