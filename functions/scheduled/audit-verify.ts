import type { Context } from 'aws-lambda';
import { logger } from '@lib/log';
import { runtime } from '@lib/runtime';

// Hourly: the background full walk of the audit chain (anchor → signed head, every row re-hashed,
// the signed checkpoint met on the way). A long chain is walked in slices: each run works until
// 30 s before its own timeout, saves its signed progress, and the next run continues. The last
// result is what GET /api/audit/verify and the fleet status report.
const MARGIN_MS = 30_000;

export async function handler(_event?: unknown, context?: Pick<Context, 'getRemainingTimeInMillis'>) {
  const rt = runtime();
  const remaining = context?.getRemainingTimeInMillis?.() ?? 300_000;
  const state = await rt.audit.fullWalk({ deadline: Date.now() + Math.max(5_000, remaining - MARGIN_MS) });
  if (state.running) logger.info('audit full walk continues in the next run', { ...state.running });
  return state;
}
