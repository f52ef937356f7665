import { expireRequests } from '@lib/approvals/requests';
import { runtime } from '@lib/runtime';

// Every Approvals:CheckInterval (5 minutes): pending requests past their lifetime become expired
// (`request.expired`). Idempotent; two runs at once expire each request once.
export async function handler() {
  return expireRequests(runtime());
}
