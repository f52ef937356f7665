import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { requireOperatorOfNamedClient } from '../../../lib/fleet/bundles';
import { createClient, getClient } from '../../../lib/fleet/clients';
import { Tctl } from '../../../lib/fleet/cluster-cli';
import { requireDeploymentsClient } from '../../../lib/fleet/deployment-flow';
import { deploymentValidateSchema, getDeployment, insertDeployment, newDeployment, type Deployment } from '../../../lib/fleet/deployments';
import { addJoinToken } from '../../../lib/fleet/join-tokens';
import { removeClient } from '../../../lib/fleet/register';
import type { FleetRuntime } from '../../../lib/fleet/runtime';
import { FAKE_TCTL_PATH, fakeTctlEnv, resetFakeTctl, setFakeTctlControl } from '../../../local/fleet/fake-tctl';
import { memoryStore } from '../../support/memory-store';

// Deployments' scope edges (issue 25 #4): a validate body naming another client, a console
// instance bundle naming none, and a client's removal taking its deployments (and their join
// tokens) with it.

const refusing = () => {
  const refusals: unknown[][] = [];
  return { refusals, refuse: async (...a: unknown[]) => { refusals.push(a); throw Object.assign(new Error('refused'), { code: a[0] }); } };
};

describe('validate: the body names the deployment\'s client or none', () => {
  const d = { clientCode: 'acme' } as Deployment;
  it('keeps clientCode in the parsed body (it was stripped, so never checked)', () => {
    expect(deploymentValidateSchema.parse({ clientCode: 'globex' })).toEqual({ clientCode: 'globex' });
  });
  it('refuses another client with client_scope naming it; its own or none pass', async () => {
    for (const body of [{}, { clientCode: 'acme' }]) {
      const r = refusing();
      await requireDeploymentsClient({ body, addressed: { clientCode: 'acme', resource: d }, refuse: r.refuse } as any);
      expect(r.refusals).toEqual([]);
    }
    const r = refusing();
    await expect(requireDeploymentsClient({ body: { clientCode: 'globex' }, addressed: { clientCode: 'acme', resource: d }, refuse: r.refuse } as any)).rejects.toMatchObject({ code: 'client_scope' });
    expect(r.refusals).toEqual([['client_scope', 'operator', 'globex']]);
  });
});

it('a console instance bundle without clientCode is refused client_scope, for an administrator too', async () => {
  const r = refusing();
  const admin = { levelOn: () => 'admin', visibleCodes: () => undefined, identity: { admin: true } };
  await expect(requireOperatorOfNamedClient({ body: {}, access: admin, refuse: r.refuse } as any)).rejects.toMatchObject({ code: 'client_scope' });
  expect(r.refusals).toEqual([['client_scope', 'operator', null]]);
});

describe('removing a client', () => {
  let dir: string;
  const saved = { ...process.env };
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fake-tctl-client-removal-'));
    resetFakeTctl(dir);
    Object.assign(process.env, fakeTctlEnv(dir, path.join(dir, 'commands.log')));
  });
  afterEach(() => {
    process.env = { ...saved };
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const tokensFile = () => JSON.parse(fs.readFileSync(path.join(dir, 'tokens.json'), 'utf8')) as any[];

  async function setUp() {
    const store = memoryStore();
    const cli = new Tctl({ TCTL_PATH: FAKE_TCTL_PATH, TCTL_TIMEOUT_MS: 5000, ACCESS_AUTH_SERVER: 'teleport.msp.test:443', ACCESS_IDENTITY_FILE: '/var/lib/fleet/identity', ACCESS_MACHINE_ID_IDENTITY: undefined });
    const rows: any[] = [];
    const rt = { store, cli, audit: { append: async (r: any) => void rows.push(r) } } as unknown as FleetRuntime;
    await createClient(store, { code: 'gone', name: 'Gone', notes: '', contacts: [] });
    await createClient(store, { code: 'stays', name: 'Stays', notes: '', contacts: [] });
    const deployments: Deployment[] = [];
    for (const [code, state] of [['gone', 'generated'], ['gone', 'completed'], ['stays', 'generated']] as const) {
      const t = await addJoinToken(cli, { type: 'windowsdesktop', ttlHours: 4, labels: { client_code: code } });
      const d = { ...newDeployment({ clientCode: code, hostname: `h-${deployments.length}`, domain: 'x.local', ttlHours: 4 } as any, { tokenHash: t.tokenHash, tokenId: t.tokenId, expires: t.expires }, 'admin'), state, ...(state === 'completed' ? { revocation: 'revoked' as const } : {}) };
      await insertDeployment(store, d);
      deployments.push({ ...d, tokenHash: t.token }); // the secret kept here only to find it in the fixture
    }
    return { store, rt, rows, deployments, by: { actor: { name: 'msp-admin' }, correlationId: 'c1' } };
  }

  it("revokes its open deployments' tokens, removes its deployment records, audited; another client's stay", async () => {
    const { store, rt, rows, deployments: [open, done, other], by } = await setUp();
    await removeClient(rt, 'gone', by);
    expect(await getClient(store, 'gone')).toBeUndefined();
    expect(await getDeployment(store, open.id)).toBeUndefined();
    expect(await getDeployment(store, done.id)).toBeUndefined();
    expect(await getDeployment(store, other.id)).toBeDefined();
    const names = tokensFile().map((t) => t.metadata.name);
    expect(names).not.toContain(open.tokenHash);
    expect(names).toContain(other.tokenHash);
    expect(rows.map((r) => [r.event, r.outcome, r.target?.id])).toEqual([
      ['token.revoke', 'ok', open.tokenId],
      ['deployment.delete', 'success', expect.any(String)],
      ['deployment.delete', 'success', expect.any(String)],
      ['client.delete', 'success', 'gone'],
    ]);
    expect(rows.at(-1).details).toEqual({ deployments: 2 });
    expect(JSON.stringify(rows)).not.toContain(open.tokenHash);
  });

  it('a revocation that fails stops the removal: 502 token_revoke_failed, nothing removed', async () => {
    const { store, rt, rows, deployments: [open], by } = await setUp();
    const YAML = require('yaml');
    const role = YAML.parse(fs.readFileSync(path.resolve(__dirname, '../../../lib/fleet/identity-role.yaml'), 'utf8'));
    for (const r of role.spec.allow.rules) if (r.resources.includes('token')) r.verbs = r.verbs.filter((v: string) => v !== 'delete');
    setFakeTctlControl(dir, { roles: [role] });
    await expect(removeClient(rt, 'gone', by)).rejects.toMatchObject({ status: 502, code: 'token_revoke_failed' });
    expect(await getClient(store, 'gone')).toBeDefined();
    expect(await getDeployment(store, open.id)).toBeDefined();
    expect(rows.map((r) => [r.event, r.outcome])).toEqual([['token.revoke', 'error']]);
  });

  it('an unknown client is 404 before any token is touched', async () => {
    const { rt, rows, by } = await setUp();
    await expect(removeClient(rt, 'nobody', by)).rejects.toMatchObject({ status: 404 });
    expect(rows).toEqual([]);
  });
});
