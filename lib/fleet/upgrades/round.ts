import type { Store } from '../../store';
import type { UpgradePlanFacts } from '../alerts/rules';
import type { ConsoleRecord } from '../consoles';
import type { ConsolePollState } from '../poll/state';
import { forgetPlan, isForgotten, listAllPlans, planOnRound, putPlan } from './plans';
import { readUpgradeSettings } from './settings';

// The plans' part of a polling round, once every console was polled: close the plans whose
// console now reports the target (read this round), forget the plans of removed consoles and the
// closed ones past 30 days, and hand the open plans to the `console_upgrade_overdue` rule.

export async function advanceUpgradePlans(
  store: Store,
  input: { now: number; roundId: string; consoles: ConsoleRecord[]; states: Map<string, ConsolePollState> },
): Promise<{ plans: UpgradePlanFacts[]; delayDays: number }> {
  const [settings, plans] = await Promise.all([readUpgradeSettings(store), listAllPlans(store)]);
  const registered = new Set(input.consoles.map((c) => c.id));
  const open: UpgradePlanFacts[] = [];
  for (const plan of plans) {
    if (!registered.has(plan.consoleId) || isForgotten(plan, input.now)) {
      await forgetPlan(store, plan.consoleId);
      continue;
    }
    const st = input.states.get(plan.consoleId);
    const answered = !!st && st.roundId === input.roundId && st.ok;
    const next = planOnRound(plan, answered, st?.status?.instance.version, input.now);
    if (next !== plan) await putPlan(store, next);
    if (!next.upgradedAt) open.push({ consoleId: next.consoleId, to: next.to, plannedAt: next.plannedAt, reached: false });
  }
  return { plans: open, delayDays: settings.alertAfterDays };
}
