import fs from 'node:fs';
import type { Browser } from 'playwright-core';
import { NODE, stack as fleetStack } from '../integration/fleet/support';
import { seriousViolations, launch, screenshot, type Watched } from './support';
import { hostsShown, platformContext, proxiesShown } from './fleet-support';

// Technicians arriving through the access platform (its JWT on every request): a technician
// scoped to one client sees that client only, on every screen and in everything the page
// received; nothing is offered that his level cannot do; an out-of-scope deep link shows the
// same page as an unknown one.

let browser: Browser;
beforeAll(async () => {
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
});

// what tech-alice (operator of acme only) must never receive: other clients' names, codes, hosts,
// and the cluster's own nodes (administrators only)
const FOREIGN = [/globex/i, /initech/i, /teleport-main/, /Hank Scorpio/, /mallory/];
const ACME_CONSOLE = fleetStack.consoles.find((c) => c.clientCode === 'acme')!.id;
const GLOBEX_CONSOLE = fleetStack.consoles.find((c) => c.clientCode === 'globex')!.id;

test("a technician of one client: only that client's data on every screen and in every response", async () => {
  const w: Watched = await platformContext(browser, 'fleet-tech-alice', 'tech-alice', ['fleet-technician']);
  const { page } = w;
  const seen: string[] = [];
  const text = async () => seen.push(await page.locator('body').innerText());
  await page.goto('/proxies');
  await proxiesShown(page);
  await expect(page.getByTestId('scope').textContent()).resolves.toBe('Clients: acme (operator)');
  await expect(page.getByTestId('who').textContent()).resolves.toBe('tech-alice · Technician');
  const hosts = await hostsShown(page);
  expect(hosts.length).toBeGreaterThan(0);
  expect(hosts.every((h) => h.startsWith('acme-'))).toBe(true);
  // administrators' parts are not offered
  expect(await page.getByLabel('Show all nodes').count()).toBe(0);
  expect(await page.getByRole('link', { name: 'Technicians' }).count()).toBe(0);
  expect(await page.getByRole('link', { name: 'Alert settings' }).count()).toBe(0);
  expect(await seriousViolations(page)).toEqual([]);
  await screenshot(page, 'fleet-technician-proxies');
  await text();

  for (const [path, ready] of [
    ['/proxies?group=client', '[data-testid="group-acme"]'],
    [`/proxies/${NODE.acmeGw01}`, 'h1'],
    ['/clients', '[data-testid="client-acme"]'],
    ['/clients/acme', 'h1'],
    [`/consoles/${ACME_CONSOLE}`, '[data-testid="last-poll"]'],
    ['/alerts', '[data-testid="alerts-history"]'],
    ['/audit', '[data-testid="audit"]'],
    ['/access', '[data-testid="gateways"]'],
  ] as const) {
    await page.goto(path);
    await page.locator(ready).first().waitFor();
    await page.waitForLoadState('networkidle');
    await text();
  }
  // the operator of acme may edit its register entry, not remove it (administrators only)
  await page.goto('/clients/acme');
  await page.getByRole('button', { name: 'Edit client' }).waitFor();
  expect(await page.getByRole('button', { name: 'Remove client' }).count()).toBe(0);
  expect(await page.getByRole('button', { name: 'Register a client' }).count()).toBe(0);
  expect(await page.getByRole('button', { name: 'Add a console' }).count()).toBe(0);
  // and poll its console now, edit it (client, token), not remove it
  await page.goto(`/consoles/${ACME_CONSOLE}`);
  await page.getByRole('button', { name: 'Poll now' }).click();
  await page.getByTestId('poll-now-result').filter({ hasText: /^Polled now: / }).waitFor();
  expect(await page.getByRole('button', { name: 'Edit console' }).count()).toBe(1);
  expect(await page.getByRole('button', { name: 'Remove console' }).count()).toBe(0);
  await text();

  // out of scope and unknown: the same page
  const notFound = async (path: string) => {
    await page.goto(path);
    await page.getByTestId('not-found').waitFor();
    return page.locator('main').innerText();
  };
  const unknown = await notFound('/proxies/00000000-0000-4000-8000-0000000000ff');
  expect(await notFound(`/proxies/${NODE.globexGw01}`)).toBe(unknown);
  expect(await notFound('/clients/globex')).toBe(unknown);
  expect(await notFound('/clients/no-such-client')).toBe(unknown);
  expect(await notFound(`/consoles/${GLOBEX_CONSOLE}`)).toBe(unknown);
  expect(await notFound('/consoles/00000000-0000-4000-8000-0000000000ff')).toBe(unknown);
  expect(await notFound('/technicians')).toBe(unknown);
  expect(await notFound('/alerts/settings')).toBe(unknown);
  await text();

  await w.context.close();
  for (const s of seen) for (const re of FOREIGN) expect([re.source, re.test(s) ? s : '']).toEqual([re.source, '']);
  // everything the page received (HAR with bodies): API answers, the app's files
  const har = JSON.parse(fs.readFileSync(w.harFile, 'utf8'));
  const bodies: Array<{ url: string; text: string }> = har.log.entries.map((e: any) => ({ url: e.request.url, text: `${e.response.content?.text ?? ''} ${JSON.stringify(e.response.headers)}` }));
  expect(bodies.filter((b) => b.url.includes('/api/nodes')).length).toBeGreaterThan(0);
  for (const b of bodies) for (const re of FOREIGN) expect([b.url, re.source, re.test(b.text)]).toEqual([b.url, re.source, false]);
}, 150_000); // seven screens, each a few cluster CLI runs (and first calls of their functions)

test('a viewer is offered no lock and no edit; the header lists each client with its level', async () => {
  const w = await platformContext(browser, 'fleet-tech-bob', 'tech-bob', ['fleet-technician']);
  const { page } = w;
  await page.goto(`/proxies/${NODE.acmeGw01}`);
  await page.getByRole('heading', { name: 'acme-gw01' }).waitFor();
  const scope = await page.getByTestId('scope').textContent();
  expect(scope).toMatch(/^Clients: /);
  expect(scope).toContain('acme (viewer)');
  expect(scope).toContain('globex (viewer)');
  expect(await page.getByRole('button', { name: /lock/i }).count()).toBe(0);
  await page.goto('/clients/acme');
  await page.getByRole('heading', { name: /Acme Industries/ }).waitFor();
  expect(await page.getByRole('button', { name: 'Edit client' }).count()).toBe(0);
  await page.goto(`/consoles/${ACME_CONSOLE}`);
  await page.getByTestId('last-poll').waitFor();
  for (const name of ['Poll now', 'Edit console', 'Remove console']) expect([name, await page.getByRole('button', { name }).count()]).toEqual([name, 0]);
  await w.context.close();
});

test('an access-platform user without a fleet role is refused in words', async () => {
  const w = await platformContext(browser, 'fleet-stranger', 'stranger', ['some-other-role']);
  await w.page.goto('/proxies');
  await expect(w.page.getByRole('alert').textContent()).resolves.toMatch(/no role that opens the fleet dashboard/);
  await w.context.close();
});
