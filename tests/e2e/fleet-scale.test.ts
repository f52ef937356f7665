import { randomUUID } from 'node:crypto';
import type { Browser, Request } from 'playwright-core';
import { FIXTURE_NOW } from '../../local/fleet/fake-tctl';
import { nextPollState, writePollState, deletePollState } from '../../lib/fleet/poll/state';
import { deleteRecord, putRecord } from '../../lib/store/records';
import { fleetStore, tctl } from '../integration/fleet/support';
import { launch, type Watched } from './support';
import { platformContext, proxiesShown } from './fleet-support';

// 5 000 proxies (and 10 000 Windows desktops) from the fake cluster CLI: the proxies screen's first
// render and a filter change, each timed in this run and printed. The table draws 200 rows at a
// time ("Show more"), so the page stays responsive whatever the fleet's size.

const PROXIES = 5000;
const DESKTOPS = 10000;
const base = Date.parse(FIXTURE_NOW); // the fake shifts every timestamp so that this instant is now
const iso = (ms: number) => new Date(ms).toISOString();
const uuid = (i: number) => `${i.toString(16).padStart(8, '0')}-1e24-4c75-8d0f-92a6e3b4c5d7`;
const codes = ['acme', 'globex', 'initech', ...Array.from({ length: 97 }, (_, i) => `client-${i}`)];

let browser: Browser;
let w: Watched;

beforeAll(async () => {
  const instances = Array.from({ length: PROXIES }, (_, i) => ({
    kind: 'instance',
    version: 'v1',
    metadata: { name: uuid(i), expires: iso(base + 3600e3), revision: uuid(i + 1e6) },
    spec: { version: i % 7 === 0 ? '17.7.3' : '18.4.2', services: i === 0 ? ['Auth', 'Proxy', 'Node'] : ['Node', 'WindowsDesktop'], hostname: `gw-${i}`, auth_id: uuid(0), last_seen: iso(base - (i % 40) * 60_000) },
  }));
  const services = instances.slice(1).map((it, i) => ({ kind: 'windows_desktop_service', version: 'v3', metadata: { name: it.metadata.name, expires: iso(base + 600e3), revision: uuid(i + 3e6) }, spec: { addr: '@local-windows-desktop', teleport_version: it.spec.version, hostname: it.spec.hostname } }));
  const desktops = Array.from({ length: DESKTOPS }, (_, i) => {
    const host = 1 + (i % (PROXIES - 1));
    return { kind: 'windows_desktop', version: 'v3', metadata: { name: `desk-${i}`, labels: { client_code: codes[host % codes.length] }, expires: iso(base + 600e3), revision: uuid(i + 4e6) }, spec: { addr: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:3389`, domain: 'corp.local', host_id: uuid(host), non_ad: false } };
  });
  tctl.writeFixture('inventory_ls.json', instances);
  tctl.writeFixture('windows_desktop_service.json', services);
  tctl.writeFixture('windows_desktops.json', desktops);
  tctl.writeFixture('locks.json', []);
  browser = await launch();
  w = await platformContext(browser, 'fleet-scale', 'msp-admin', ['fleet-admin']);
});
afterAll(async () => {
  await w?.context.close().catch(() => undefined);
  await browser?.close();
  tctl.reset();
});

test(`${PROXIES} proxies: first render and a filter change, timed`, async () => {
  const { page } = w;
  // the fake cluster CLI (a Node script: three processes parsing and shifting ~10 MB of JSON) takes
  // seconds on a busy machine: each wait below may, the screen itself is measured apart
  w.context.setDefaultTimeout(60_000);
  // warm the function once (a cold start is serverless-offline's, not the screen's)
  expect((await page.request.get('/api/nodes?status=locked')).status()).toBe(200);
  const nodesAnswer = () => page.waitForResponse((r) => new URL(r.url()).pathname === '/api/nodes' && r.request().method() === 'GET');
  const t0 = Date.now();
  const first = nodesAnswer().then(() => Date.now() - t0);
  await page.goto('/proxies');
  await proxiesShown(page);
  await page.locator('[data-testid="proxies-table"] tbody tr').first().waitFor();
  const firstRender = Date.now() - t0;
  const firstApi = await first;
  await expect(page.getByTestId('list-status').textContent()).resolves.toMatch(new RegExp(`^${PROXIES - 1} proxies`));
  const drawn = await page.locator('[data-testid="proxies-table"] tbody tr').count();
  expect(drawn).toBeLessThanOrEqual(200);
  const online = Number(await page.getByTestId('count-online').locator('.n').textContent());

  const t1 = Date.now();
  const filtered = nodesAnswer().then(() => Date.now() - t1);
  await page.getByTestId('count-online').click();
  await page.getByTestId('list-status').filter({ hasText: new RegExp(`^${online} of ${PROXIES - 1} proxies`) }).waitFor();
  await proxiesShown(page);
  const filterChange = Date.now() - t1;
  const filterApi = await filtered;

  // the page still answers input at once (no long task holding the main thread)
  const t2 = Date.now();
  await page.getByLabel('Search').fill('gw-42');
  const typed = Date.now() - t2;
  await page.getByTestId('list-status').filter({ hasText: /^\d+ of \d+ proxies/ }).waitFor();

  console.log(
    `fleet dashboard, ${PROXIES - 1} client proxies (${DESKTOPS} desktops): first render ${firstRender} ms (API answer at ${firstApi} ms, drawing ${firstRender - firstApi} ms), ` +
      `filter change (Online, ${online} rows) ${filterChange} ms (API answer at ${filterApi} ms, drawing ${filterChange - filterApi} ms), typing in the search ${typed} ms; ${drawn} rows drawn`,
  );
  // what the screen controls: drawing after the answer, and input never held
  expect(firstRender - firstApi).toBeLessThan(3_000);
  expect(filterChange - filterApi).toBeLessThan(3_000);
  expect(typed).toBeLessThan(1_000);
  // end to end, the fake CLI included (loose: a shared 2-core machine)
  expect(firstRender).toBeLessThan(45_000);
  expect(filterChange).toBeLessThan(30_000);
}, 120_000);

const CONSOLES = 1000;

test(`${CONSOLES} registered consoles: Clients, a client and Alerts draw their first content from one answer each, none per console (issue 29; times printed)`, async () => {
  const { page } = w;
  w.context.setDefaultTimeout(60_000);
  const store = fleetStore();
  const at = new Date().toISOString();
  const ids: string[] = [];
  // registered straight in the store with a last poll each, as a fleet of that size has them (a
  // token nobody can open: the scheduled poll, should it run meanwhile, fails them at once)
  const clients = ['acme', 'globex', 'initech'];
  // the scheduled poll (rate(1 minute), at each minute's start) would poll these consoles and
  // replace their last poll: the seeding and every check fit between two of its runs (the test
  // takes 10-20 s on a busy 2-core machine; a run during it once left no timeout to show)
  const sinceMinute = Date.now() % 60_000;
  if (sinceMinute > 15_000) await new Promise((r) => setTimeout(r, 60_000 - sinceMinute + 3_000));
  await Promise.all(
    Array.from({ length: CONSOLES }, async (_, i) => {
      const id = randomUUID();
      ids.push(id);
      await putRecord(store, 'CONSOLE', id, { id, clientCode: clients[i % 3], url: `https://scale-${i}.consoles.example`, sealedToken: 'e2e-scale', createdAt: at, updatedAt: at }, { expectVersion: 0 });
      const status = { instance: { version: i % 5 ? '1.4.0' : '1.3.2' }, health: { status: i % 97 ? 'healthy' : 'down' }, audit: { chain: 'ok', failedLogins24h: i % 13 }, directory: { dcs: [{ name: 'dc1', url: 'ldaps://dc1.corp.test:636', state: 'up' }] } };
      await writePollState(store, nextPollState(undefined, id, 'e2e-scale', i % 50 ? { ok: true, at, ms: 40, status: status as never } : { ok: false, at, ms: 10_000, error: 'timeout' as never }));
    }),
  );
  try {
    // warm each function once (a cold start is serverless-offline's, not the screen's)
    for (const p of ['/api/clients', '/api/consoles', '/api/consoles?clientCode=acme', '/api/clients/acme', '/api/alerts', '/api/clients/acme/access-role']) expect((await page.request.get(p)).status()).toBe(200);
    await page.goto('/upgrades');
    await page.getByRole('heading', { name: 'Console upgrades' }).waitFor();
    // each screen's API requests, counted while it draws: one answer per screen, none per console
    const timed = async (go: () => Promise<unknown>, first: () => Promise<unknown>, all: () => Promise<unknown>) => {
      const requests: string[] = [];
      const seen = (r: Request) => {
        const path = new URL(r.url()).pathname;
        if (path.startsWith('/api/')) requests.push(path);
      };
      page.on('request', seen);
      try {
        const t0 = Date.now();
        await go();
        await first();
        const f = Date.now() - t0;
        await all();
        return { first: f, all: Date.now() - t0, requests };
      } finally {
        page.off('request', seen);
      }
    };
    const nav = page.getByRole('navigation', { name: 'Sections' });
    const clientsPage = await timed(
      () => nav.getByRole('link', { name: 'Clients' }).click(),
      () => page.getByTestId('client-acme').waitFor(),
      () => page.locator('[data-testid="consoles-table"] tbody tr').nth(CONSOLES - 1).waitFor(),
    );
    const clientPage = await timed(
      () => page.getByTestId('client-acme').getByRole('link').click(),
      () => page.getByTestId('your-level').waitFor(),
      () => page.locator('[data-testid="consoles-table"] tbody tr').nth(Math.floor(CONSOLES / 3) - 1).waitFor(),
    );
    const alertsPage = await timed(
      () => nav.getByRole('link', { name: 'Alerts', exact: true }).click(),
      () => page.getByTestId('alerts-active').waitFor(),
      () => page.getByTestId('alerts-history').waitFor(),
    );
    console.log(
      `fleet dashboard, ${CONSOLES} consoles: Clients first content ${clientsPage.first} ms, every console with its last poll ${clientsPage.all} ms; ` +
        `a client (${Math.ceil(CONSOLES / 3)} consoles) ${clientPage.first} ms / ${clientPage.all} ms; Alerts ${alertsPage.first} ms / ${alertsPage.all} ms; ` +
        `API requests ${clientsPage.requests.length} / ${clientPage.requests.length} / ${alertsPage.requests.length}`,
    );
    // from one answer each, not one per console (was one status request per console: 29.7 s for 26):
    // a screen asks a handful of lists whatever the fleet's size
    for (const screen of [clientsPage, clientPage, alertsPage]) expect(screen.requests.length).toBeLessThanOrEqual(6);
    expect(clientsPage.requests.filter((p) => p.startsWith('/api/consoles'))).toHaveLength(1);
    // the times are printed above (about 0.1-0.5 s on a quiet machine, issue 29's 1 s); held loosely
    // here, on a shared 2-core machine where the CI measured 1,085 ms once (speed goals are benches')
    for (const screen of [clientsPage, clientPage, alertsPage]) expect(screen.first).toBeLessThan(5_000);
    expect(clientsPage.all).toBeLessThan(10_000);
    // the list carries each console's last poll: failures and versions without a request per console
    await page.goto('/clients');
    await page.locator('[data-testid="consoles-table"] tbody tr').nth(CONSOLES - 1).waitFor();
    expect(await page.locator('[data-testid="consoles-table"] tbody tr', { hasText: 'failed (timeout)' }).count()).toBe(CONSOLES / 50);
  } finally {
    await Promise.all(ids.map(async (id) => (await deleteRecord(store, 'CONSOLE', id), await deletePollState(store, id))));
  }
}, 180_000);
