import { listClients } from './clients';
import { allCliReads, ClusterCliError, getResources, type ClusterCli } from './cluster-cli';
import type { FleetRuntime } from './runtime';

// GET /api/access/autoupdate: the cluster's managed-update state, read-only, from the three
// singletons. A missing autoupdate_config or autoupdate_version is a warning, not an error; so is
// a resource the fleet plane's role may not read (the spec's identity role grants no autoupdate_*
// read: docs/fleet.md gives the optional role that does).

/**
 * Update groups a caller sees: administrators all; a technician only his clients' groups
 * (`client-<code>`): shared groups (canary, ...) count agents of every client.
 */
export const autoUpdateGroupVisible = (visible: Set<string> | undefined) => (name: string) =>
  !visible || (name.startsWith('client-') && visible.has(name.slice('client-'.length)));

type Warning = { code: 'resource_missing' | 'access_denied'; resource: string };

/** A singleton, or the warning that replaces it (missing, or not readable by the fleet role). */
async function readSingleton(cli: ClusterCli, kind: string, warnings: Warning[], warnMissing: boolean): Promise<unknown | undefined> {
  try {
    const item = (await getResources(cli, kind))[0];
    if (item === undefined && warnMissing) warnings.push({ code: 'resource_missing', resource: kind });
    return item;
  } catch (e) {
    if (e instanceof ClusterCliError && e.missing) {
      if (warnMissing) warnings.push({ code: 'resource_missing', resource: kind });
      return undefined;
    }
    if (e instanceof ClusterCliError && e.code === 'access_access_denied') {
      warnings.push({ code: 'access_denied', resource: kind });
      return undefined;
    }
    throw e;
  }
}

const obj = (v: unknown): Record<string, any> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, any>) : {});
const str = (v: unknown) => (typeof v === 'string' ? v : null);
const num = (v: unknown) => (typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : null);

/** AUTO_UPDATE_AGENT_GROUP_STATE_DONE → done */
const enumName = (v: unknown, prefix: string) => {
  const s = str(v);
  return s ? (s.startsWith(prefix) ? s.slice(prefix.length) : s).toLowerCase() : null;
};

/**
 * The managed-update state as the caller may see it (his clients' update groups only), with
 * each registered client of his scope whose group `client-<code>` the rollout does not hold
 * listed as not scheduled (issue 31: its agents are never updated automatically).
 */
export async function autoUpdateInScope(rt: Pick<FleetRuntime, 'cli' | 'store'>, access: { visibleCodes(): Set<string> | undefined }) {
  const visible = access.visibleCodes();
  const [state, clients] = await Promise.all([readAutoUpdate(rt.cli, autoUpdateGroupVisible(visible)), listClients(rt.store)]);
  return { ...state, notScheduled: notScheduledGroups(state, clients.map((c) => c.code).filter((c) => !visible || visible.has(c))) };
}

/**
 * The clients' update groups the rollout does not hold: all of them without a rollout; null when
 * the rollout could not be read (the fleet role may not read it: no claim either way).
 */
export function notScheduledGroups(state: Pick<AutoUpdateState, 'rollout' | 'warnings'>, clientCodes: string[]): Array<{ name: string; clientCode: string }> | null {
  if (state.warnings.some((w) => w.code === 'access_denied' && w.resource === 'autoupdate_agent_rollout')) return null;
  const scheduled = new Set((state.rollout?.groups ?? []).map((g) => g.name));
  return [...clientCodes]
    .sort()
    .map((code) => ({ name: `client-${code}`, clientCode: code }))
    .filter((g) => !scheduled.has(g.name));
}

export type AutoUpdateState = Awaited<ReturnType<typeof readAutoUpdate>>;

export async function readAutoUpdate(cli: ClusterCli, visibleGroup: (name: string) => boolean) {
  const warnings: Warning[] = [];
  const [config, version, rollout] = await allCliReads([
    readSingleton(cli, 'autoupdate_config', warnings, true),
    readSingleton(cli, 'autoupdate_version', warnings, true),
    readSingleton(cli, 'autoupdate_agent_rollout', warnings, false),
  ]);
  warnings.sort((a, b) => a.resource.localeCompare(b.resource));
  const cAgents = obj(obj(obj(config).spec).agents);
  const vAgents = obj(obj(obj(version).spec).agents);
  const rSpec = obj(obj(rollout).spec);
  const rStatus = obj(obj(rollout).status);
  const groups = (Array.isArray(rStatus.groups) ? rStatus.groups : []).map(obj).filter((g) => typeof g.name === 'string' && visibleGroup(g.name));
  return {
    mode: str(cAgents.mode),
    toolsMode: str(obj(obj(obj(config).spec).tools).mode),
    targetVersion: str(vAgents.target_version) ?? str(rSpec.target_version),
    startVersion: str(vAgents.start_version) ?? str(rSpec.start_version),
    schedule: str(vAgents.schedule) ?? str(rSpec.schedule),
    strategy: str(rSpec.strategy) ?? str(cAgents.strategy),
    rollout: rollout
      ? {
          state: enumName(rStatus.state, 'AUTO_UPDATE_AGENT_ROLLOUT_STATE_'),
          startTime: str(rStatus.start_time),
          groups: groups.map((g) => ({
            name: g.name as string,
            state: enumName(g.state, 'AUTO_UPDATE_AGENT_GROUP_STATE_'),
            startTime: str(g.start_time),
            lastUpdateTime: str(g.last_update_time),
            lastUpdateReason: str(g.last_update_reason),
            days: Array.isArray(g.config_days) ? g.config_days.filter((d: unknown) => typeof d === 'string') : [],
            startHour: num(g.config_start_hour),
            presentCount: num(g.present_count),
            upToDateCount: num(g.up_to_date_count),
          })),
        }
      : null,
    warnings,
  };
}
