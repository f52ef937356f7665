import type { Context } from 'aws-lambda';
import { runScheduledPoll } from '@lib/fleet/poll';
import { fleetRuntime } from '@lib/fleet/runtime';

// Every minute (serverless.fleet.yml): poll every console, evaluate the alert rules, notify.
// A round that does not fit in one invocation continues in the next (lib/fleet/poll/round.ts).
export async function handler(_event?: unknown, context?: Pick<Context, 'getRemainingTimeInMillis'>) {
  return runScheduledPoll(fleetRuntime(), context?.getRemainingTimeInMillis?.() ?? 60_000);
}
