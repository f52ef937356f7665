import { ClusterCliError, type ClusterCli } from '../../../lib/fleet/cluster-cli';
import { logger } from '../../../lib/log';
import { fleetInProcess } from './in-process';

// Issue 31, item 5: each client's update group `client-<code>` that the rollout does not hold is
// shown as not scheduled (its agents are never updated automatically), instead of being left out;
// within the caller's scope; no claim when the rollout cannot be read.

let rollout: unknown[] | 'denied' = [];
const group = (name: string) => ({ name, state: 'AUTO_UPDATE_AGENT_GROUP_STATE_DONE', config_days: ['Mon'], config_start_hour: 2, present_count: '3', up_to_date_count: '3' });
const cli: ClusterCli = {
  async run(args) {
    const kind = args[1];
    if (kind === 'autoupdate_agent_rollout') {
      if (rollout === 'denied') throw new ClusterCliError('access_access_denied');
      return { stdout: JSON.stringify(rollout), stderr: '' };
    }
    if (kind === 'autoupdate_config') return { stdout: JSON.stringify([{ kind, spec: { agents: { mode: 'enabled', strategy: 'halt-on-failure' } } }]), stderr: '' };
    if (kind === 'autoupdate_version') return { stdout: JSON.stringify([{ kind, spec: { agents: { target_version: '18.4.2' } } }]), stderr: '' };
    return { stdout: '[]', stderr: '' };
  },
};
const withGroups = (...names: string[]) => [{ kind: 'autoupdate_agent_rollout', spec: {}, status: { state: 'AUTO_UPDATE_AGENT_ROLLOUT_STATE_ACTIVE', groups: names.map(group) } }];

let f: Awaited<ReturnType<typeof fleetInProcess>>;
beforeAll(async () => {
  jest.spyOn(logger, 'warn').mockImplementation(() => undefined);
  jest.spyOn(logger, 'info').mockImplementation(() => undefined);
  jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
  f = await fleetInProcess({ cli });
  for (const code of ['acme', 'globex', 'initech']) expect((await f.call('POST', '/api/clients', f.admin, { code, name: code })).status).toBe(201);
  expect((await f.call('PUT', '/api/technicians', f.admin, { username: 'tech-bob', clients: [{ code: 'acme', level: 'viewer' }, { code: 'globex', level: 'viewer' }] })).status).toBe(201);
});
afterAll(() => jest.restoreAllMocks());

const names = (body: any) => body.notScheduled?.map((g: any) => g.name) ?? null;

it('lists the registered clients whose group the rollout does not hold, beside the rollout groups', async () => {
  rollout = withGroups('canary', 'client-acme');
  const r = await f.call('GET', '/api/access/autoupdate', f.admin);
  expect(r.status).toBe(200);
  expect(r.body.rollout.groups.map((g: any) => g.name)).toEqual(['canary', 'client-acme']);
  expect(r.body.notScheduled).toEqual([
    { name: 'client-globex', clientCode: 'globex' },
    { name: 'client-initech', clientCode: 'initech' },
  ]);
});

it("shows a technician only his clients' unscheduled groups", async () => {
  rollout = withGroups('canary', 'client-acme');
  expect(names((await f.call('GET', '/api/access/autoupdate', await f.platform('tech-bob', ['fleet-technician']))).body)).toEqual(['client-globex']);
});

it('counts every client group as not scheduled without a rollout, and makes no claim when the rollout is unreadable', async () => {
  rollout = [];
  const none = await f.call('GET', '/api/access/autoupdate', f.admin);
  expect([none.body.rollout, names(none.body)]).toEqual([null, ['client-acme', 'client-globex', 'client-initech']]);
  rollout = 'denied';
  const denied = await f.call('GET', '/api/access/autoupdate', f.admin);
  expect(denied.status).toBe(200);
  expect([denied.body.notScheduled, denied.body.warnings]).toEqual([null, [{ code: 'access_denied', resource: 'autoupdate_agent_rollout' }]]);
});

it('lists none when every client group is in the rollout', async () => {
  rollout = withGroups('client-acme', 'client-globex', 'client-initech');
  expect(names((await f.call('GET', '/api/access/autoupdate', f.admin)).body)).toEqual([]);
});
