import { getSingleton, type ClusterCli } from './cluster-cli';

// GET /api/access/autoupdate: the cluster's managed-update state, read-only, from the three
// singletons. A missing autoupdate_config or autoupdate_version is a warning, not an error.

const obj = (v: unknown): Record<string, any> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, any>) : {});
const str = (v: unknown) => (typeof v === 'string' ? v : null);
const num = (v: unknown) => (typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : null);

/** AUTO_UPDATE_AGENT_GROUP_STATE_DONE → done */
const enumName = (v: unknown, prefix: string) => {
  const s = str(v);
  return s ? (s.startsWith(prefix) ? s.slice(prefix.length) : s).toLowerCase() : null;
};

export async function readAutoUpdate(cli: ClusterCli, visibleGroup: (name: string) => boolean) {
  const [config, version, rollout] = await Promise.all([
    getSingleton(cli, 'autoupdate_config'),
    getSingleton(cli, 'autoupdate_version'),
    getSingleton(cli, 'autoupdate_agent_rollout'),
  ]);
  const warnings: Array<{ code: string; resource: string }> = [];
  if (!config) warnings.push({ code: 'resource_missing', resource: 'autoupdate_config' });
  if (!version) warnings.push({ code: 'resource_missing', resource: 'autoupdate_version' });
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
