import { expireRequests, resumeJobs } from '@lib/approvals/requests';
import { decisionContext, runtime } from '@lib/runtime';

// Every Approvals:CheckInterval (5 minutes): pending requests past their lifetime become expired
// (`request.expired`); bulk and leaver jobs whose runner is gone are resumed as their approver.
// Idempotent; two runs at once expire each request once and run each job step once.
export async function handler() {
  const rt = runtime();
  const expiry = await expireRequests(rt);
  const jobs = rt.settings().then((s) => (s ? decisionContext(rt).then((dc) => resumeJobs(rt, dc)) : { resumed: 0, closed: 0 }));
  return { ...expiry, ...(await jobs) };
}
