import type { Store } from '../../store';
import { evaluateRules, type AlertDraft, type RuleInput, type RuleOutput } from './rules';
import { fireAlert, listActiveAlerts, refreshAlert, resolveAlert, writeEvaluationMeta, type Alert } from './store';
import type { Transition } from './notify';

// The alert lifecycle (fleet spec, Alert lifecycle) over the rules' output:
//   none → fired      rule holds (data read this round): one history entry, one notification
//   fired → fired     still holds: values refreshed, no notification
//   fired → resolved  decided clear (data read this round), or its console / proxy was removed
// An active alert no rule decided about this round (no data) stays as it is.

export interface LifecycleContext {
  now: number;
  roundId: string;
  /** consoles registered now: an alert of any other console is resolved (console removed) */
  consoleIds: Set<string>;
}

const same = (a: Alert, d: AlertDraft) => a.severity === d.severity && a.subject === d.subject && JSON.stringify(a.params) === JSON.stringify(d.params);

export function isDecidedClear(key: string, out: Pick<RuleOutput, 'clearKeys' | 'clearPrefixes'>): boolean {
  return out.clearKeys.includes(key) || out.clearPrefixes.some((p) => key.startsWith(p));
}

export async function applyRuleOutput(store: Store, out: RuleOutput, ctx: LifecycleContext): Promise<Transition[]> {
  const at = new Date(ctx.now).toISOString();
  const active = new Map((await listActiveAlerts(store)).map((a) => [a.key, a]));
  const held = new Map(out.held.map((d) => [d.key, d]));
  const transitions: Transition[] = [];
  for (const d of held.values()) {
    const cur = active.get(d.key);
    if (!cur) {
      const alert: Alert = { ...d, firedAt: at, updatedAt: at };
      if (await fireAlert(store, alert)) transitions.push({ event: 'fired', alert });
    } else if (!same(cur, d)) await refreshAlert(store, { ...cur, ...d, updatedAt: at });
  }
  for (const a of active.values()) {
    if (held.has(a.key)) continue;
    const removed = a.consoleId !== undefined && !ctx.consoleIds.has(a.consoleId);
    if (!removed && !isDecidedClear(a.key, out)) continue;
    const gone = await resolveAlert(store, a.key);
    if (gone) transitions.push({ event: 'resolved', alert: { ...gone, resolvedAt: at, ...(removed ? { params: { ...gone.params, resolution: 'console_removed' } } : {}) } });
  }
  await writeEvaluationMeta(store, { lastEvaluationAt: at, roundId: ctx.roundId });
  return transitions;
}

/** Rules then lifecycle: the transitions of this round (to notify). */
export async function evaluateAlerts(store: Store, input: RuleInput): Promise<Transition[]> {
  const out = evaluateRules(input);
  return applyRuleOutput(store, out, { now: input.now, roundId: input.roundId, consoleIds: new Set(input.consoles.map((c) => c.id)) });
}
