import type { Store } from '../../store';
import { deleteRecord, putRecord, queryRecords } from '../../store/records';
import { reportedText, REPORTED_VERSION } from '../poll/reported';
import { driftOf } from './version';

// Upgrade plans (fleet spec, "Console drift and upgrade plans"), one per console (pk UPGRADEPLAN,
// sk <console id>). The state table as pure functions of the plan, the time and the last poll:
//   none     --pack generated, console behind-->  pending   (audit upgrade.planned, once)
//   pending  --pack again, same target-------->  pending   (no new row, the delay keeps running)
//   pending  --pack, another target----------->  pending   (a new plan replaces the open one)
//   pending  --round: reports target or above->  upgraded  (closed)
//   pending  --older than the delay----------->  overdue   (displayed; alert console_upgrade_overdue)
//   upgraded --30 days after closing---------->  forgotten
//   any      --console removed---------------->  forgotten (immediately)
// "Older than" is strict: a plan exactly `delay` days old is still pending, a closed plan exactly
// 30 days old is still kept (docs/decisions.md).

const DAY = 86_400_000;
export const CLOSED_PLAN_KEEP_MS = 30 * DAY;

export interface UpgradePlan {
  consoleId: string;
  /** the console's version when the plan was made (last successful poll), null: unknown */
  from: string | null;
  /** the target tag */
  to: string;
  /** what upgrade.sh is given: `<repository>:<tag>` or the tag alone */
  image: string;
  plannedAt: string;
  plannedBy?: string;
  /** closed: the console reported the target or above */
  upgradedAt?: string;
  /** the version the console reported when the plan closed */
  reachedVersion?: string;
}

export type PlanState = 'pending' | 'overdue' | 'upgraded';

export function planState(plan: UpgradePlan, now: number, alertAfterDays: number): PlanState {
  if (plan.upgradedAt) return 'upgraded';
  return now - Date.parse(plan.plannedAt) > alertAfterDays * DAY ? 'overdue' : 'pending';
}

/** A closed plan is forgotten 30 days after it closed (strictly after). */
export const isForgotten = (plan: UpgradePlan, now: number): boolean => !!plan.upgradedAt && now - Date.parse(plan.upgradedAt) > CLOSED_PLAN_KEEP_MS;

/**
 * A pack names this console (already known to be behind, or chosen by the caller): the plan to
 * keep. The open plan for the same target is kept as it is (idempotent: no new audit row, the
 * alert delay is not restarted); any other, or none, gives a new plan.
 */
export function planOnPack(existing: UpgradePlan | undefined, c: { consoleId: string; version: string | null }, target: { tag: string; image: string }, now: number, by?: string): { plan: UpgradePlan; created: boolean } {
  if (existing && !existing.upgradedAt && existing.to === target.tag) {
    return { plan: existing.image === target.image ? existing : { ...existing, image: target.image }, created: false };
  }
  return { plan: { consoleId: c.consoleId, from: c.version, to: target.tag, image: target.image, plannedAt: new Date(now).toISOString(), ...(by ? { plannedBy: by } : {}) }, created: true };
}

/**
 * A polling round read this console (`polledOk`: it answered this round) reporting `version`:
 * an open plan whose target it reached is closed. No answer this round: no decision.
 */
export function planOnRound(plan: UpgradePlan, polledOk: boolean, version: string | null | undefined, now: number): UpgradePlan {
  if (plan.upgradedAt || !polledOk) return plan;
  if (driftOf(version, plan.to) !== 'up_to_date') return plan;
  return { ...plan, upgradedAt: new Date(now).toISOString(), reachedVersion: version! };
}

export interface UpgradeProgress {
  planned: number;
  upgraded: number;
  pending: number;
  overdue: number;
}

/** planned = every plan kept; pending excludes the overdue ones (planned = upgraded + pending + overdue). */
export function progressOf(plans: UpgradePlan[], now: number, alertAfterDays: number): UpgradeProgress {
  const p: UpgradeProgress = { planned: plans.length, upgraded: 0, pending: 0, overdue: 0 };
  for (const plan of plans) p[planState(plan, now, alertAfterDays)]++;
  return p;
}

// ---- storage ----

const PK = 'UPGRADEPLAN';

/** A stored plan's reported versions held to the poll's pattern (a plan made before it may hold a raw reported text). */
const checkedPlan = (p: UpgradePlan): UpgradePlan => ({
  ...p,
  from: p.from === null ? null : reportedText(REPORTED_VERSION, p.from),
  ...(p.reachedVersion !== undefined ? { reachedVersion: reportedText(REPORTED_VERSION, p.reachedVersion) } : {}),
});

/** The plans kept (forgotten closed plans are left out even before a round deletes them). */
export async function listPlans(store: Store, now = Date.now()): Promise<UpgradePlan[]> {
  return (await queryRecords<UpgradePlan>(store, PK)).map((r) => checkedPlan(r.data)).filter((p) => !isForgotten(p, now));
}

export async function listAllPlans(store: Store): Promise<UpgradePlan[]> {
  return (await queryRecords<UpgradePlan>(store, PK)).map((r) => checkedPlan(r.data));
}

export async function putPlan(store: Store, plan: UpgradePlan): Promise<void> {
  await putRecord(store, PK, plan.consoleId, plan);
}

export async function forgetPlan(store: Store, consoleId: string): Promise<void> {
  await deleteRecord(store, PK, consoleId);
}

export async function listPlanRecords(store: Store): Promise<Array<{ plan: UpgradePlan; version: number }>> {
  return (await queryRecords<UpgradePlan>(store, PK)).map((r) => ({ plan: r.data, version: r.version }));
}

/** Write a plan only if its record is still at `version` (0: absent); false when another request won. */
export async function putPlanIf(store: Store, plan: UpgradePlan, version: number): Promise<boolean> {
  return putRecord(store, PK, plan.consoleId, plan, { expectVersion: version });
}
