import fs from 'node:fs';
import type { Browser } from 'playwright-core';
import { NODE, tctl } from '../integration/fleet/support';
import { commandOf, readCommandLog } from '../../local/fleet/fake-tctl';
import { seriousViolations, launch, reachByTab, screenshot, type Watched } from './support';
import { fleet, hostsShown, openFleetContext, proxiesShown, signInLocal } from './fleet-support';

// The fleet dashboard as the local administrator: sign-in, the header's scope, the proxies table
// and every deep link of the spec restoring its view, a proxy's page with its Connect links, a
// lock and an unlock through the dialogs (the cluster CLI really asked), the inventory CSV.

let browser: Browser;
let w: Watched;

beforeAll(async () => {
  tctl.reset();
  browser = await launch();
  w = await openFleetContext(browser, 'fleet-admin');
});
afterAll(async () => {
  await w?.context.close().catch(() => undefined);
  await browser?.close();
  tctl.reset();
});

test('the local administrator signs in; the header shows the user and "Clients: all"; the proxies table and count cards', async () => {
  const { page } = w;
  await page.goto('/');
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  await screenshot(page, 'fleet-sign-in');
  expect(await seriousViolations(page)).toEqual([]);
  // a wrong password is refused in words
  await page.getByLabel('User name').fill(fleet.fleetAdmin.username);
  await page.getByLabel('Password').fill('not-the-password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('alert').textContent()).resolves.toBe('The user name or password is not right.');
  await signInLocal(page, '/');
  await expect(page.getByTestId('scope').textContent()).resolves.toBe('Clients: all');
  await expect(page.getByTestId('who').textContent()).resolves.toBe('admin · Administrator (local sign-in)');
  await page.waitForURL('**/proxies');
  await proxiesShown(page);
  const hosts = await hostsShown(page);
  expect(hosts).toEqual(expect.arrayContaining(['acme-gw01', 'acme-gw02', 'globex-gw01']));
  expect(hosts).not.toContain('teleport-main'); // not a client proxy: only with "Show all nodes"
  const total = Number(await page.getByTestId('count-all').locator('.n').textContent());
  expect(total).toBe(hosts.length); // count cards describe the rows the table can show
  expect(await seriousViolations(page)).toEqual([]);
  await screenshot(page, 'fleet-proxies');
});

test('every deep link restores its view: status, q, all+kind, sort+dir, group, a proxy, an unknown proxy', async () => {
  const { page } = w;
  await page.goto('/proxies?status=locked');
  await proxiesShown(page);
  await expect(page.getByTestId('count-locked').getAttribute('aria-pressed')).resolves.toBe('true');
  expect(await hostsShown(page)).toEqual(['acme-gw02']);

  await page.goto('/proxies?q=globex');
  await proxiesShown(page);
  await expect(page.getByLabel('Search').inputValue()).resolves.toBe('globex');
  const globex = await hostsShown(page);
  expect(globex.length).toBeGreaterThan(0);
  expect(globex.every((h) => h.startsWith('globex'))).toBe(true);

  await page.goto('/proxies?all=1&kind=auth');
  await proxiesShown(page);
  await expect(page.getByLabel('Show all nodes').isChecked()).resolves.toBe(true);
  await expect(page.getByLabel('Kind').inputValue()).resolves.toBe('auth');
  expect(await hostsShown(page)).toEqual(['teleport-main']);

  await page.goto('/proxies?sort=version&dir=desc');
  await proxiesShown(page);
  await expect(page.getByLabel('Sort by').inputValue()).resolves.toBe('version');
  await expect(page.getByLabel('Order').inputValue()).resolves.toBe('desc');
  const versions = await page.locator('[data-testid="proxies-table"] tbody tr td:nth-child(5)').allTextContents();
  const major = versions.map((v) => Number(/^(\d+)/.exec(v)?.[1] ?? 0));
  expect([...major].sort((a, b) => b - a)).toEqual(major);

  await page.goto('/proxies?group=client');
  await proxiesShown(page);
  await expect(page.getByLabel('Group by client').isChecked()).resolves.toBe(true);
  await expect(page.getByTestId('group-acme').locator('tr.group').textContent()).resolves.toMatch(/^Acme Industries \(\d+\)$/);
  await expect(page.getByTestId('group-globex').locator('tr.group').textContent()).resolves.toMatch(/^Globex SA \(\d+\)$/);

  // a filter clicked in the page writes the URL (the back button returns to the view before)
  await page.getByTestId('count-outdated').click();
  await page.waitForURL(/status=outdated/);
  expect(new URL(page.url()).searchParams.get('group')).toBe('client');
  await page.goBack();
  await page.waitForURL((u) => !u.search.includes('status='));

  await page.goto(`/proxies/${NODE.acmeGw01}`);
  await page.getByRole('heading', { name: 'acme-gw01' }).waitFor();
  const connect = page.getByRole('link', { name: 'Connect to acme-dc01' });
  expect(await connect.getAttribute('href')).toBe('https://teleport.hdc-local.test:443/web/cluster/hdc-local/resources?kinds=windows_desktop&search=acme-dc01'.replace(':443', ':443'));
  expect(await seriousViolations(page)).toEqual([]);

  await page.goto('/proxies/00000000-0000-4000-8000-0000000000ff');
  await page.getByTestId('not-found').waitFor();
});

test('a proxy is locked through the dialog (duration, message) and unlocked; the cluster CLI ran both', async () => {
  const { page } = w;
  const mark = readCommandLog(fleet.tctlLog).length;
  await page.goto(`/proxies/${NODE.acmeGw01}`);
  await page.getByRole('button', { name: 'Lock proxy' }).click();
  const dialog = page.getByRole('dialog', { name: 'Lock acme-gw01' });
  await dialog.getByLabel('Duration').selectOption('4');
  await dialog.getByLabel(/^Message/).fill('Maintenance by the e2e test');
  await expect(dialog.getByText('173 characters left').count()).resolves.toBe(1);
  await screenshot(page, 'fleet-lock-dialog');
  expect(await seriousViolations(page)).toEqual([]);
  await dialog.getByRole('button', { name: 'Lock', exact: true }).click();
  await dialog.waitFor({ state: 'detached' });
  await expect(page.getByTestId('lock-notice').textContent()).resolves.toMatch(/^Locked\./);
  await page.getByTestId('locks').getByText(/Maintenance by the e2e test · until/).waitFor();
  await expect(page.getByTestId('proxy-status').textContent()).resolves.toBe('Locked');

  await page.getByRole('button', { name: 'Unlock proxy' }).click();
  const unlock = page.getByRole('dialog', { name: 'Unlock acme-gw01' });
  await unlock.getByRole('button', { name: 'Unlock', exact: true }).click();
  await unlock.waitFor({ state: 'detached' });
  await expect(page.getByTestId('lock-notice').textContent()).resolves.toMatch(/^Unlocked \(\d+ locks? removed\)\.$/);
  await page.getByRole('button', { name: 'Lock proxy' }).waitFor();

  const cmds = readCommandLog(fleet.tctlLog).slice(mark).map(commandOf);
  expect(cmds.some((c) => c[0] === 'lock' && c.includes(`--server-id=${NODE.acmeGw01}`) && c.includes('--message=Maintenance by the e2e test') && c.includes('--ttl=4h'))).toBe(true);
  expect(cmds.some((c) => c[0] === 'rm' && c[1]?.startsWith('lock/'))).toBe(true);
});

test('the Auth/Proxy master offers no lock, and says why', async () => {
  const { page } = w;
  await page.goto(`/proxies/${NODE.master}`);
  await page.getByRole('heading', { name: 'teleport-main' }).waitFor();
  await page.getByText('An Auth or Proxy node cannot be locked').waitFor();
  expect(await page.getByRole('button', { name: 'Lock proxy' }).count()).toBe(0);
});

test('the inventory CSV of the current view downloads, and the controls are reachable by keyboard', async () => {
  const { page } = w;
  await page.goto('/proxies?q=acme');
  await proxiesShown(page);
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download inventory (CSV)' }).click()]);
  expect(download.suggestedFilename()).toMatch(/^fleet-inventory-\d{4}-\d{2}-\d{2}\.csv$/);
  const csv = fs.readFileSync((await download.path())!, 'utf8');
  const lines = csv.trim().split(/\r?\n/);
  expect(lines.length).toBeGreaterThan(1);
  expect(csv).toContain('acme-dc01');
  expect(csv).not.toContain('globex');

  await page.locator('body').click({ position: { x: 1, y: 1 } });
  expect(await reachByTab(page, 'input[name="q"]')).toBe(true);
  expect(await reachByTab(page, 'button.secondary')).toBe(true);
});
