import type { AuditActor } from '../../audit';
import type { FleetAccess } from '../access';
import { listConsoles, type ConsoleRecord } from '../consoles';
import { readPollStates, type ConsolePollState } from '../poll/state';
import { pollSummary, type PollSummary } from '../poll/summary';
import type { FleetRuntime } from '../runtime';
import { listPlans, planState, progressOf, type PlanState } from './plans';
import { normalizeSettings, readUpgradeSettings, writeUpgradeSettings, type UpgradeSettings, type UpgradeSettingsInput } from './settings';
import { driftOf, type Drift } from './version';

export { generateUpgradePack, packJson, packRequestSchema, packZip, mayOperate, type PackRequest, type UpgradePack } from './pack';
export { upgradeSettingsSchema, type UpgradeSettings } from './settings';
export { driftOf, compareVersions, type Drift } from './version';

// Console upgrades as the routes use them: the target and each plan filtered by scope, the
// settings change with its audit row.

const visible = (access: FleetAccess, code: string) => {
  const codes = access.visibleCodes();
  return !codes || codes.has(code);
};

/** The version a console last reported (a failed last poll keeps its last successful one). */
export const lastVersion = (st: ConsolePollState | undefined): string | null => st?.status?.instance.version ?? null;

/** The drift badge of each console against the target; null when no target is set (versions not compared). */
export function consoleDrift(settings: Pick<UpgradeSettings, 'targetTag'>, st: ConsolePollState | undefined): { version: string | null; drift: Drift | null } {
  const version = lastVersion(st);
  return { version, drift: settings.targetTag ? driftOf(version, settings.targetTag) : null };
}

export interface PlanView {
  consoleId: string;
  clientCode: string;
  url: string;
  from: string | null;
  to: string;
  image: string;
  plannedAt: string;
  state: PlanState;
  upgradedAt: string | null;
  currentVersion: string | null;
  overdueSince: string | null;
}

const DAY = 86_400_000;

export async function upgradesView(rt: FleetRuntime, access: FleetAccess, now = Date.now()) {
  const [settings, plans, consoles, states] = await Promise.all([readUpgradeSettings(rt.store), listPlans(rt.store, now), listConsoles(rt.store), readPollStates(rt.store)]);
  const byId = new Map<string, ConsoleRecord>(consoles.map((c) => [c.id, c]));
  // a plan follows its console (also to another client); a plan of a removed console is forgotten
  const mine = plans.filter((p) => byId.has(p.consoleId) && visible(access, byId.get(p.consoleId)!.clientCode));
  const views: PlanView[] = mine
    .map((p) => {
      const c = byId.get(p.consoleId)!;
      const state = planState(p, now, settings.alertAfterDays);
      return {
        consoleId: p.consoleId,
        clientCode: c.clientCode,
        url: c.url,
        from: p.from,
        to: p.to,
        image: p.image,
        plannedAt: p.plannedAt,
        state,
        upgradedAt: p.upgradedAt ?? null,
        currentVersion: lastVersion(states.get(p.consoleId)),
        overdueSince: state === 'overdue' ? new Date(Date.parse(p.plannedAt) + settings.alertAfterDays * DAY).toISOString() : null,
      };
    })
    .sort((a, b) => a.clientCode.localeCompare(b.clientCode) || a.url.localeCompare(b.url));
  const scoped = consoles.filter((c) => visible(access, c.clientCode));
  const drift = { up_to_date: 0, behind: 0, unknown: 0 };
  if (settings.targetTag) for (const c of scoped) drift[driftOf(lastVersion(states.get(c.id)), settings.targetTag)]++;
  return {
    target: settings.targetTag ? { tag: settings.targetTag, repository: settings.repository } : null,
    settings: { targetTag: settings.targetTag, repository: settings.repository, alertAfterDays: settings.alertAfterDays, updatedAt: settings.updatedAt ?? null, updatedBy: settings.updatedBy ?? null },
    plans: views,
    progress: progressOf(mine, now, settings.alertAfterDays),
    consoles: settings.targetTag ? drift : null,
  };
}

export async function changeUpgradeSettings(rt: FleetRuntime, input: UpgradeSettingsInput, by: { actor: AuditActor; correlationId: string }): Promise<UpgradeSettings> {
  const before = await readUpgradeSettings(rt.store);
  const next: UpgradeSettings = { ...normalizeSettings(input), updatedAt: new Date().toISOString(), updatedBy: by.actor.name ?? by.actor.id };
  await writeUpgradeSettings(rt.store, next);
  const changed = (['targetTag', 'repository', 'alertAfterDays'] as const).filter((k) => before[k] !== next[k]);
  await rt.audit.append({
    event: 'upgrades.settings',
    outcome: 'success',
    actor: by.actor,
    correlationId: by.correlationId,
    target: { id: 'upgrades', kind: 'settings' },
    details: { targetTag: next.targetTag, repository: next.repository, alertAfterDays: next.alertAfterDays, changed, ...(changed.includes('targetTag') ? { previousTargetTag: before.targetTag } : {}) },
  });
  return next;
}

/**
 * Console answers with their drift badge, `version` (last successful poll) and `drift` (null: no
 * target set), and their last poll (issue 29: a list of consoles renders at once from stored
 * state, one answer, no request per console).
 */
export async function withDrift<C extends { id: string }>(store: FleetRuntime['store'], consoles: C[]): Promise<Array<C & { version: string | null; drift: Drift | null; poll: PollSummary }>> {
  if (consoles.length === 0) return [];
  const [settings, states] = await Promise.all([readUpgradeSettings(store), readPollStates(store)]);
  return consoles.map((c) => ({ ...c, ...consoleDrift(settings, states.get(c.id)), poll: pollSummary(states.get(c.id)) }));
}
