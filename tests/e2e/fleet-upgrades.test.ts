import fs from 'node:fs';
import path from 'node:path';
import { unzipSync } from 'fflate';
import type { Browser } from 'playwright-core';
import { deleteRecord, queryRecords } from '../../lib/store/records';
import { adminAuth, call, fleetStore as stackFleetStore, personaHeaders, tctl } from '../integration/fleet/support';
import { stack } from '../support/stack';
import { startHttpsReceiver, type HttpsReceiver } from '../support/https-receiver';
import { ARTIFACTS, seriousViolations, launch, screenshot, type Watched } from './support';
import { fleet, platformContext } from './fleet-support';

// Console upgrades and the per-client access role through the dashboard: an administrator sets the
// target (a refusal in words first), sees a console Behind and the progress, makes a pack shown as
// commands and one downloaded as a zip; a technician who only views one client sees that client's
// plans and no control; the client's access role YAML, created or refreshed by the administrator,
// an unmanaged role replaced only after the explicit confirmation.
//
// Two consoles of this file answer on a real HTTPS receiver (version 1.2.0): one of acme, one of
// initech. The upgrade settings, the plans this file makes and the cluster CLI's roles are put
// back at the end (other files change them too).

let browser: Browser;
let hook: HttpsReceiver;
let saved: { targetTag: string | null; repository: string | null; alertAfterDays: number } | undefined;
const started = new Date().toISOString();
const fleetStore = stackFleetStore();
const consoles: Record<'acme' | 'initech', { id: string; url: string }> = { acme: { id: '', url: '' }, initech: { id: '', url: '' } };
const api = async (method: string, p: string, body?: unknown) => call(method, p, { ...(await adminAuth()), body });
const roleIn = (name: string) => (tctl.readFixture('roles.json') as any[]).find((r) => r.metadata.name === name);

beforeAll(async () => {
  saved = (await api('GET', '/api/upgrades')).body.settings;
  hook = await startHttpsReceiver(stack.directory.caFile);
  hook.answer = (r) => (r.url.startsWith('/console/') ? { status: 200, json: { instance: { version: '1.2.0' }, health: { status: 'healthy' }, audit: { chain: 'ok', failedLogins24h: 0 }, directory: { dcs: [] } } } : 204);
  for (const code of ['acme', 'initech'] as const) {
    const url = `${hook.url}/console/e2e-upgrade-${code}`;
    const r = await api('POST', '/api/consoles', { clientCode: code, url, token: `e2e-upgrade-${code}-token-0123456789abcdef` });
    expect(r.status).toBe(201);
    consoles[code] = { id: r.body.id, url };
    // its last poll reads 1.2.0
    expect((await api('POST', `/api/consoles/${r.body.id}/poll`)).body).toMatchObject({ ok: true, version: '1.2.0' });
  }
  // no target to start from: this file sets the one it needs through the dashboard
  expect((await api('PUT', '/api/upgrades/settings', { targetTag: '' })).status).toBe(200);
  tctl.reset();
  browser = await launch();
});
afterAll(async () => {
  await browser?.close();
  // removing a console forgets its plan; the plans of other consoles this file's packs made go too
  for (const c of Object.values(consoles)) if (c.id) await api('DELETE', `/api/consoles/${c.id}`);
  for (const r of await queryRecords<any>(fleetStore, 'UPGRADEPLAN')) if (r.data.plannedBy === 'msp-admin' && r.data.plannedAt >= started) await deleteRecord(fleetStore, 'UPGRADEPLAN', r.sk);
  if (saved) await api('PUT', '/api/upgrades/settings', { targetTag: saved.targetTag ?? '', repository: saved.repository, alertAfterDays: saved.alertAfterDays });
  tctl.reset();
  await hook?.close();
});

test('an administrator sets the target (a refusal in words first), sees a console Behind and the progress, gets the commands and the zip', async () => {
  const w: Watched = await platformContext(browser, 'fleet-upgrades-admin', 'msp-admin', ['fleet-admin']);
  const { page } = w;
  await page.goto('/clients');
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Upgrades' }).click();
  await page.getByRole('heading', { name: 'Console upgrades' }).waitFor();
  await expect(page.getByTestId('target-tag').textContent()).resolves.toMatch(/^Not set/);

  // settings: `latest` is refused in words, nothing saved; then the target, repository and delay
  await page.getByRole('button', { name: 'Change upgrade settings' }).click();
  const dialog = page.getByRole('dialog', { name: 'Upgrade settings' });
  await dialog.getByLabel('Target version (image tag)').fill('latest');
  await dialog.getByRole('button', { name: 'Save settings' }).click();
  await expect(dialog.getByRole('alert').textContent()).resolves.toMatch(/^Some fields are not filled in correctly\. targetTag: `latest` names no version/);
  expect((await api('GET', '/api/upgrades')).body.target).toBeNull();
  await dialog.getByLabel('Target version (image tag)').fill('1.4.0');
  await dialog.getByLabel('Image repository (optional)').fill('registry.msp.example/hdc');
  await dialog.getByLabel('Overdue after (days)').fill('5');
  await dialog.getByRole('button', { name: 'Save settings' }).click();
  await dialog.waitFor({ state: 'detached' });
  await page.getByTestId('target-tag').filter({ hasText: /^1\.4\.0$/ }).waitFor();
  expect((await api('GET', '/api/upgrades')).body.settings).toMatchObject({ targetTag: '1.4.0', repository: 'registry.msp.example/hdc', alertAfterDays: 5, updatedBy: 'msp-admin' });

  // the selected consoles: both of this file's are Behind (1.2.0 < 1.4.0)
  await page.getByLabel('The consoles selected below').check();
  const picker = page.getByTestId('pack-consoles');
  for (const c of Object.values(consoles)) {
    const row = picker.locator('tr', { hasText: c.url });
    await expect(row.textContent()).resolves.toMatch(/1\.2\.0Behind$/);
    await row.getByRole('checkbox').check();
  }
  await page.getByRole('button', { name: 'Show the commands' }).click();
  const shown = page.getByTestId(`pack-${consoles.acme.id}`);
  await expect(shown.textContent()).resolves.toBe(`${consoles.acme.url}: 1.2.0 → 1.4.0cd <instance directory>\n./upgrade.sh 'registry.msp.example/hdc:1.4.0'`);
  await page.getByTestId(`pack-${consoles.initech.id}`).waitFor();

  // each became a plan, Pending; the progress counts them
  for (const c of Object.values(consoles)) await expect(page.getByTestId(`plan-${c.id}`).textContent()).resolves.toMatch(/1\.2\.01\.4\.01\.2\.0Pending/);
  const progress = (k: string) => page.getByTestId(`progress-${k}`).locator('.n').textContent().then(Number);
  const planned = await progress('planned');
  expect(planned).toBeGreaterThanOrEqual(2);
  expect((await progress('upgraded')) + (await progress('pending')) + (await progress('overdue'))).toBe(planned);
  expect((await api('GET', '/api/upgrades')).body.progress.planned).toBe(planned);
  expect(await seriousViolations(page)).toEqual([]);
  await screenshot(page, 'fleet-upgrades');

  // every console behind, as a zip file: a folder per client with README.md, a script per console, upgrade.sh
  await page.getByLabel('Every console behind the target that you may operate').check();
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download the pack (zip)' }).click()]);
  expect(download.suggestedFilename()).toBe('console-upgrade-1.4.0.zip');
  const file = path.join(ARTIFACTS, 'fleet-upgrade-pack.zip');
  await download.saveAs(file);
  const zip = fs.readFileSync(file);
  expect(zip.subarray(0, 4).toString('latin1')).toBe('PK\u0003\u0004');
  const entries = unzipSync(new Uint8Array(zip));
  for (const code of ['acme', 'initech']) {
    expect(Object.keys(entries)).toEqual(expect.arrayContaining([`${code}/README.md`, `${code}/upgrade.sh`]));
    expect(Buffer.from(entries[`${code}/upgrade.sh`]).toString('utf8')).toMatch(/^#!\/usr\/bin\/env bash/);
  }
  await expect(page.getByTestId('pack-result').filter({ hasText: /Downloaded/ }).textContent()).resolves.toMatch(/^Downloaded console-upgrade-1\.4\.0\.zip: /);
  await w.context.close();
}, 120_000);

test("a technician who views one client sees that client's plans only, and no settings or pack control", async () => {
  const w = await platformContext(browser, 'fleet-upgrades-carol', 'tech-carol', ['fleet-technician', 'fleet-client-initech']);
  const { page } = w;
  await page.goto('/upgrades');
  await page.getByTestId(`plan-${consoles.initech.id}`).waitFor();
  await expect(page.getByTestId('scope').textContent()).resolves.toBe('Clients: initech (viewer)');
  await expect(page.getByTestId('target-tag').textContent()).resolves.toBe('1.4.0');
  const rows = await page.locator('[data-testid="plans-table"] tbody tr').allTextContents();
  expect(rows.some((r) => r.includes(consoles.initech.url))).toBe(true);
  expect(rows.filter((r) => !r.includes('initech'))).toEqual([]);
  for (const name of ['Change upgrade settings', 'Show the commands', 'Download the pack (zip)']) expect([name, await page.getByRole('button', { name }).count()]).toEqual([name, 0]);
  expect(await page.getByRole('radio').count()).toBe(0);
  expect(await page.locator('body').innerText()).not.toMatch(/acme/i);
  expect((await call('GET', '/api/upgrades', await personaHeaders('outsider'))).body.plans.map((p: { clientCode: string }) => p.clientCode)).toEqual(['initech']);
  expect(await seriousViolations(page)).toEqual([]);

  // the client's access role: its YAML, no button for a viewer
  await page.goto('/clients/initech');
  await expect(page.getByTestId('access-role').textContent()).resolves.toContain('name: "fleet-client-initech"');
  expect(await page.getByRole('button', { name: 'Create or refresh in the cluster' }).count()).toBe(0);
  await w.context.close();
  // nothing of acme in what the API answered
  const har = JSON.parse(fs.readFileSync(w.harFile, 'utf8'));
  for (const e of har.log.entries.filter((x: any) => x.request.url.includes('/api/'))) expect([e.request.url, /acme/i.test(e.response.content?.text ?? '')]).toEqual([e.request.url, false]);
});

test("the client's access role: the YAML, created or refreshed by an administrator; an unmanaged role replaced only on purpose", async () => {
  const w = await platformContext(browser, 'fleet-access-role-admin', 'msp-admin', ['fleet-admin']);
  const { page } = w;
  await page.goto('/clients/acme');
  const yaml = await page.getByTestId('access-role').textContent();
  expect(yaml).toContain('name: "fleet-client-acme"');
  expect(yaml).toContain('client_code: "acme"');
  expect(yaml).toContain('fleet-managed: "true"');
  await page.getByRole('button', { name: 'Create or refresh in the cluster' }).click();
  await expect(page.getByTestId('access-role-result').filter({ hasText: /in the cluster/ }).textContent()).resolves.toMatch(/^fleet-client-acme (created|refreshed) in the cluster/);
  expect(roleIn('fleet-client-acme').metadata.labels).toMatchObject({ 'fleet-managed': 'true', client_code: 'acme' });

  // a role of that name someone else made: explained, nothing written, replaced only after the confirmation
  const roles = tctl.readFixture('roles.json') as any[];
  const theirs = { ...roles[0], metadata: { name: 'fleet-client-acme', labels: { owner: 'security-team' }, revision: 'theirs' }, spec: { ...roles[0].spec, allow: { logins: ['root'] } } };
  tctl.writeFixture('roles.json', [theirs, ...roles.filter((r) => r.metadata.name !== 'fleet-client-acme')]);
  await page.getByRole('button', { name: 'Create or refresh in the cluster' }).click();
  const refusal = page.getByTestId('access-role-result').getByRole('alert');
  await expect(refusal.textContent()).resolves.toMatch(/did not create.*Nothing was written/);
  expect(roleIn('fleet-client-acme')).toEqual(theirs);
  expect(await seriousViolations(page)).toEqual([]);
  await page.getByRole('button', { name: 'Replace the unmanaged role' }).click();
  await expect(page.getByTestId('access-role-result').filter({ hasText: /replaced/ }).textContent()).resolves.toMatch(/^fleet-client-acme replaced in the cluster/);
  expect(roleIn('fleet-client-acme').metadata.labels).toEqual({ client_code: 'acme', 'fleet-managed': 'true' });
  expect(roleIn('fleet-client-acme').spec.allow.logins).toBeUndefined();
  await w.context.close();
});
