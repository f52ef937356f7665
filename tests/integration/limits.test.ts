import fs from 'node:fs';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { Attribute, Change, Client, type SearchOptions } from 'ldapts';
import { consoleEnvironment } from '../../functions/admin/cli';
import { routes as computerRoutes } from '../../functions/console/computers';
import { routes as groupRoutes } from '../../functions/console/groups';
import { routes as userRoutes } from '../../functions/console/users';
import { loadConfig } from '../../lib/config';
import { guidFromBuffer } from '../../lib/directory/guid';
import { createHttpHandler } from '../../lib/http/console';
import { createRuntime } from '../../lib/runtime';
import type { InstanceSettings } from '../../lib/setup/settings';
import { getRecord, putRecord } from '../../lib/store/records';
import { httpEvent } from '../support/http-event';
import { asOperator } from '../support/in-process-console';
import { auditMark, auditSince, seedUser, signedIn, stack, store } from '../support/stack';

// The directory limits (console spec, Limits) with the limits set low in a configuration of the
// test's own (the handlers run in this process against the stack's directory and store), and the
// Tier OUs (a second one honoured like the first): the settings item the running stack reads,
// changed and put back (the handlers in this process too, so that a change to the code shows
// without restarting the stack).

const BASE = stack.directory.baseDn;
const M_GROUPS = `OU=Groups,OU=Managed,${BASE}`;
const consoleEnv = { ...process.env, ...consoleEnvironment(stack), NODE_EXTRA_CA_CERTS: stack.directory.caFile, Helpdesk__Enabled: 'true' };
const ROUTES = [...computerRoutes, ...userRoutes, ...groupRoutes] as any[];

/** GET on the console's handlers run in this process with `config`, in op-super's stack session. */
async function getWith(config: Record<string, string>, url: string): Promise<{ status: number; body: any }> {
  const rt = createRuntime({ env: { ...consoleEnv, ...config }, store });
  const c = await signedIn('op-super');
  const [p, qs] = url.split('?');
  const event = httpEvent('GET', p, { headers: { cookie: `__Host-hdc=${c.cookie('__Host-hdc')}` }, query: qs ? Object.fromEntries(new URLSearchParams(qs)) : undefined });
  (event as { rawQueryString: string }).rawQueryString = qs ?? '';
  const r = (await createHttpHandler(ROUTES, () => rt)(event)) as APIGatewayProxyStructuredResultV2;
  return { status: r.statusCode ?? 0, body: JSON.parse(r.body!) };
}

const tls = () => ({ ca: [fs.readFileSync(stack.directory.caFile)] });
async function admin<T>(fn: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ url: stack.directory.dcs[0].url, tlsOptions: tls() });
  await c.bind(stack.directory.admin.upn, stack.directory.admin.password);
  try {
    return await fn(c);
  } finally {
    await c.unbind();
  }
}

describe('Directory limits', () => {
  it('the defaults are the spec’s: PageSize 500, SearchMaxResults 5000, MaxResults 200', () => {
    expect(loadConfig({}).config.Directory).toMatchObject({ PageSize: 500, SearchMaxResults: 5000, MaxResults: 200 });
  });

  it('enumeration stops at Directory:SearchMaxResults and says incomplete (set to 3 here)', async () => {
    const all = await getWith({}, '/api/users');
    expect(all.status).toBe(200);
    expect(all.body.incomplete).toBe(false);
    expect(all.body.items.length).toBeGreaterThan(3);
    const cut = await getWith({ Directory__SearchMaxResults: '3' }, '/api/users');
    expect(cut.status).toBe(200);
    expect(cut.body.incomplete).toBe(true);
    expect(cut.body.items.length).toBeLessThanOrEqual(3);
    // cut inside one OU's enumeration (the `ou` filter: one LDAP search), the answer says so too
    const oneOu = await getWith({ Directory__SearchMaxResults: '3' }, `/api/users?ou=${encodeURIComponent(`OU=Users,OU=Managed,${BASE}`)}`);
    expect([oneOu.status, oneOu.body.incomplete]).toEqual([200, true]);
    expect(oneOu.body.items.length).toBeLessThanOrEqual(3);
    expect((await getWith({}, `/api/users?ou=${encodeURIComponent(`OU=Users,OU=Managed,${BASE}`)}`)).body).toMatchObject({ incomplete: false });
    // the computers' enumeration too
    const computers = await getWith({ Directory__SearchMaxResults: '2' }, '/api/computers');
    expect(computers.body.incomplete).toBe(true);
    expect(computers.body.items.length).toBeLessThanOrEqual(2);
  });

  it('reads the directory in LDAP pages of Directory:PageSize (set to 2 here) and follows every page', async () => {
    const pages: Array<{ pageSize?: number; entries: number }> = [];
    const original = Client.prototype.searchPaginated;
    const spy = jest.spyOn(Client.prototype, 'searchPaginated').mockImplementation(async function* (this: Client, base: any, options?: SearchOptions, controls?: any) {
      for await (const page of original.call(this, base, options, controls)) {
        pages.push({ pageSize: typeof options?.paged === 'object' ? options.paged.pageSize : undefined, entries: page.searchEntries.length });
        yield page;
      }
    });
    let paged;
    try {
      paged = await getWith({ Directory__PageSize: '2' }, '/api/users');
    } finally {
      spy.mockRestore();
    }
    const whole = await getWith({}, '/api/users');
    // the same users as with the default page size, none lost between pages
    expect(paged.body.items.map((u: { name: string }) => u.name)).toEqual(whole.body.items.map((u: { name: string }) => u.name));
    expect(paged.body.incomplete).toBe(false);
    // LDAP pages of 2: more than one page, none larger
    expect(pages.length).toBeGreaterThan(1);
    expect(new Set(pages.map((p) => p.pageSize))).toEqual(new Set([2]));
    expect(Math.max(...pages.map((p) => p.entries))).toBeLessThanOrEqual(2);
  });

  describe('group members', () => {
    const dn = `CN=lim-members,${M_GROUPS}`;
    const members = ['alice', 'bob', 'carol'].map((u) => seedUser(u).dn);
    let guid = '';
    beforeAll(async () => {
      await admin(async (c) => {
        await c.del(dn).catch(() => undefined);
        await c.add(dn, { objectClass: ['top', 'group'], sAMAccountName: 'lim-members', groupType: String(-2147483646) });
        await c.modify(dn, new Change({ operation: 'add', modification: new Attribute({ type: 'member', values: members }) }));
        guid = guidFromBuffer((await c.search(dn, { scope: 'base', attributes: ['objectGUID'], explicitBufferAttributes: ['objectGUID'] })).searchEntries[0].objectGUID as Buffer);
      });
    });
    afterAll(() => admin((c) => c.del(dn)).catch(() => undefined));

    it('a member list is capped at Directory:MaxResults and says truncated (set to 2 here)', async () => {
      const whole = await getWith({}, `/api/groups/${guid}/members`);
      expect(whole.status).toBe(200);
      expect(whole.body.items.map((m: { name: string }) => m.name).sort()).toEqual(['alice', 'bob', 'carol']);
      expect(whole.body.truncated).toBe(false);
      const cut = await getWith({ Directory__MaxResults: '2' }, `/api/groups/${guid}/members`);
      expect(cut.status).toBe(200);
      expect(cut.body.items).toHaveLength(2);
      expect(cut.body.truncated).toBe(true);
    });
  });
});

describe('Tier OUs: a second Tier OU is honoured like the first', () => {
  const settingsNow = async () => (await getRecord<InstanceSettings>(store, 'INSTANCE', 'SETTINGS'))!;
  async function withTierOu(dn: string, fn: () => Promise<void>) {
    const before = await settingsNow();
    const guid = await admin(async (c) => guidFromBuffer((await c.search(dn, { scope: 'base', attributes: ['objectGUID'], explicitBufferAttributes: ['objectGUID'] })).searchEntries[0].objectGUID as Buffer));
    const ou = { dn, guid };
    expect(before.data.tierOus.length).toBe(1);
    expect(await putRecord(store, 'INSTANCE', 'SETTINGS', { ...before.data, tierOus: [...before.data.tierOus, { dn: ou.dn, guid: ou.guid }] }, { expectVersion: before.version })).toBe(true);
    try {
      await fn();
    } finally {
      const now = await settingsNow();
      await putRecord(store, 'INSTANCE', 'SETTINGS', before.data, { expectVersion: now.version });
    }
  }
  const inList = (r: { body: any }, name: string) => r.body.items.some((x: { name: string }) => x.name === name);

  it('computers: one below the second Tier OU is neither listed nor readable (404, like one below the first), audited', async () => {
    const c = await asOperator(createRuntime({ env: consoleEnv, store }), 'op-super');
    const br = stack.computers.find((x) => x.name === 'WS-BR-01')!;
    const t0 = stack.computers.find((x) => x.name === 'SRV-T0-01')!;
    expect((await c.get(`/api/computers/${br.guid}`)).status).toBe(200);
    expect(inList(await c.get('/api/computers?q=WS-BR'), 'WS-BR-01')).toBe(true);
    await withTierOu(`OU=Workstations,OU=Branch,${BASE}`, async () => {
      const mark = await auditMark();
      for (const x of [br, t0]) {
        const r = await c.get(`/api/computers/${x.guid}`);
        expect([x.name, r.status, r.body]).toEqual([x.name, 404, { code: 'not_found' }]);
      }
      expect(inList(await c.get('/api/computers?q=WS-BR'), 'WS-BR-01')).toBe(false);
      expect(inList(await c.get('/api/computers'), 'WS-BR-01')).toBe(false);
      const reasons = (await auditSince(mark)).filter((r) => r.event === 'authz.decision' && r.outcome === 'denied').map((r) => r.reason);
      expect(reasons).toHaveLength(2);
      expect(reasons[0]).toBe(reasons[1]);
      // the other computers of the scope are untouched
      expect((await c.get(`/api/computers/${stack.computers.find((x) => x.name === 'WS-STD-01')!.guid}`)).status).toBe(200);
    });
    expect((await c.get(`/api/computers/${br.guid}`)).status).toBe(200);
  });

  it('users: one below the second Tier OU is neither listed nor readable nor changed (404), audited', async () => {
    const c = await asOperator(createRuntime({ env: consoleEnv, store }), 'op-super', { stepUp: true });
    const bea = seedUser('branch-bea');
    expect((await c.get(`/api/users/${bea.guid}`)).status).toBe(200);
    await withTierOu(`OU=Users,OU=Branch,${BASE}`, async () => {
      const mark = await auditMark();
      expect((await c.get(`/api/users/${bea.guid}`)).status).toBe(404);
      expect(inList(await c.get('/api/users?q=branch-bea'), 'branch-bea')).toBe(false);
      const unlock = await c.post(`/api/users/${bea.guid}/unlock`, { ticket: 'INC-TIER-1' });
      expect([unlock.status, unlock.body]).toEqual([404, { code: 'not_found' }]);
      const denied = (await auditSince(mark)).filter((r) => r.outcome === 'denied');
      expect(denied.map((r) => r.reason)).toEqual(expect.arrayContaining([expect.stringMatching(/tier/)]));
      expect((await c.get(`/api/users/${seedUser('alice').guid}`)).status).toBe(200);
    });
    expect((await c.get(`/api/users/${bea.guid}`)).status).toBe(200);
  });
});
