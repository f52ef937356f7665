import { createHmac, randomBytes } from 'node:crypto';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import type { Browser } from 'playwright-core';
import { deleteRecord } from '../../lib/store/records';
import { windowKey } from '../../lib/store/window';
import { adminAuth, call, fleetStore as stackFleetStore } from '../integration/fleet/support';
import { stack } from '../support/stack';
import { startHttpsReceiver, type HttpsReceiver } from '../support/https-receiver';
import { checkScreen, seriousViolations, launch, reachByTab, screenshot, type Watched } from './support';
import { fleet, platformContext } from './fleet-support';

// An administrator's alert settings and channels through the dashboard: a webhook channel created
// with a write-only URL and secret, a test send reaching a real HTTPS receiver (signed), the
// result shown; a console added through the dashboard that does not answer raises an alert after
// two failed polls, shown on the alerts page and notified to the channel; a client registered
// and removed.

let browser: Browser;
let w: Watched;
let hook: HttpsReceiver;
const hookPath = `/hook/${randomBytes(10).toString('hex')}`;
const secret = `e2e-hmac-${randomBytes(12).toString('hex')}`;
const fleetStore = stackFleetStore();
let consoleId: string | undefined;

const api = async (method: string, path: string, body?: unknown) => call(method, path, { ...(await adminAuth()), body });

beforeAll(async () => {
  hook = await startHttpsReceiver(stack.directory.caFile);
  // room for a channel (the integration tests fill the 20) and for a test send (10 a minute)
  for (const c of (await api('GET', '/api/alerts/channels')).body.channels) await api('DELETE', `/api/alerts/channels/${c.id}`);
  await fleetStore.delete({ Key: windowKey({ scope: 'alerts-channel-test', subject: 'fleet' }) });
  await api('DELETE', '/api/clients/e2e-co'); // left by an interrupted run
  browser = await launch();
  w = await platformContext(browser, 'fleet-alerts-admin', 'msp-admin', ['fleet-admin']);
});
afterAll(async () => {
  await w?.context.close().catch(() => undefined);
  await browser?.close();
  if (consoleId) await api('DELETE', `/api/consoles/${consoleId}`);
  for (const c of (await api('GET', '/api/alerts/channels')).body.channels) if (c.name === 'E2E receiver') await api('DELETE', `/api/alerts/channels/${c.id}`);
  for (const x of (await api('GET', '/api/alerts')).body.silences ?? []) if (x.comment === 'Maintenance window at Initech') await api('DELETE', `/api/alerts/silences/${x.id}`);
  await hook?.close();
});

test('a webhook channel is created (URL and secret write-only); its test send reaches the HTTPS receiver, signed, and the result is shown', async () => {
  const { page } = w;
  await page.goto('/alerts/settings');
  await page.getByRole('button', { name: 'New channel' }).click();
  const dialog = page.getByRole('dialog', { name: 'New notification channel' });
  await dialog.getByLabel('Name').fill('E2E receiver');
  await dialog.getByLabel('Type').selectOption('webhook');
  await dialog.getByLabel(/^URL/).fill(`${hook.url}${hookPath}`);
  await dialog.getByLabel(/^Signing secret/).fill(secret);
  await dialog.getByRole('button', { name: 'Save channel' }).click();
  await dialog.waitFor({ state: 'detached' });
  const row = page.getByTestId('channel-E2E receiver');
  await expect(row.textContent()).resolves.toContain(`${hook.url} · secret set`);
  expect(await page.locator('body').innerText()).not.toContain(hookPath.slice(6));

  await row.getByRole('button', { name: 'Send test to E2E receiver' }).click();
  await expect(page.getByTestId('test-result-E2E receiver').filter({ hasText: /^Test (delivered|failed)/ }).textContent()).resolves.toBe('Test delivered (HTTP 204).');
  const got = hook.received.filter((r) => r.url === hookPath);
  expect(got).toHaveLength(1);
  const body = JSON.parse(got[0].body);
  expect(body).toMatchObject({ schema: 1, source: 'fleet', events: [{ event: 'test', alert: null }] });
  const ts = String(got[0].headers['x-fleet-timestamp']);
  expect(got[0].headers['x-fleet-signature']).toBe(`sha256=${createHmac('sha256', secret).update(`${ts}.${got[0].body}`).digest('hex')}`);
  expect(await seriousViolations(page)).toEqual([]);
  await screenshot(page, 'fleet-alert-settings');
});

test('a console that does not answer raises an alert after two failed polls: on the alerts page, and notified to the channel', async () => {
  const { page } = w;
  // the console is added through the dashboard; its URL is the receiver, which answers 503
  hook.answer = (r) => (r.url.startsWith('/console/') ? 503 : 204);
  await page.goto('/clients');
  await page.getByRole('button', { name: 'Add a console' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add a console' });
  await dialog.getByLabel('Client').selectOption('initech');
  await dialog.getByLabel('URL').fill(`${hook.url}/console/initech`);
  await dialog.getByLabel(/^Access token/).fill(`e2e-${randomBytes(16).toString('hex')}`);
  await dialog.getByRole('button', { name: 'Save console' }).click();
  await dialog.waitFor({ state: 'detached' });
  consoleId = (await api('GET', '/api/consoles?clientCode=initech')).body.consoles.find((c: { url: string }) => c.url.startsWith(hook.url))?.id;
  expect(consoleId).toBeDefined();

  // two polling rounds (the schedule's function, invoked as serverless-offline's scheduler does);
  // forgetting the last round makes the next one due now instead of a minute later
  const lambda = new LambdaClient({ endpoint: fleet.lambdaEndpoint, region: 'eu-west-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' }, maxAttempts: 1 });
  const polled = () => hook.received.filter((r) => r.url.startsWith('/console/initech/api/fleet/v1/status')).length;
  for (let i = 0; i < 6 && polled() < 2; i++) {
    await deleteRecord(fleetStore, 'POLL', 'ROUND');
    await lambda.send(new InvokeCommand({ FunctionName: 'hdc-fleet-test-fleetPoll', Payload: Buffer.from('{}') }));
  }
  expect(polled()).toBeGreaterThanOrEqual(2);

  await page.goto('/alerts');
  const active = page.getByTestId('alerts-active');
  await active.getByRole('row').filter({ hasText: 'console_down' }).filter({ hasText: 'initech' }).first().waitFor();
  expect(await seriousViolations(page)).toEqual([]);
  await screenshot(page, 'fleet-alerts');
  expect(await reachByTab(page, '[data-testid="alerts-active"] a')).toBe(true);
  const fired = hook.received.filter((r) => r.url === hookPath).map((r) => JSON.parse(r.body)).flatMap((b) => b.events);
  expect(fired).toEqual(expect.arrayContaining([expect.objectContaining({ event: 'fired', alert: expect.objectContaining({ kind: 'console_down', clientCode: 'initech' }) })]));

  // the console's page tells the last poll and its result
  await page.goto(`/consoles/${consoleId}`);
  await expect(page.getByTestId('last-poll').textContent()).resolves.toMatch(/failed \(http_error 503, \d+ in a row\)/);
  // and polls it now: the result is told, the last poll counts one more failure
  const before = polled();
  expect(await reachByTab(page, '[data-testid="poll-now"]')).toBe(true);
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('poll-now-result').filter({ hasText: /^Polled now/ }).textContent()).resolves.toBe('Polled now: the console did not answer (http_error 503).');
  expect(polled()).toBe(before + 1);
  expect(await seriousViolations(page)).toEqual([]);
  await screenshot(page, 'fleet-console');
});

test('alerts you can act on: grouped by rule and client, acknowledged with why, silenced until a time, the history filtered (issue 29)', async () => {
  const { page } = w;
  await page.goto('/alerts');
  const group = page.getByTestId('group-console_down-initech');
  await group.waitFor();
  await expect(group.textContent()).resolves.toMatch(/Console down.*console_down.*initech.*\d+ alerts?/);
  // the alert of the console added above, inside its group
  const down = (await api('GET', '/api/alerts')).body.active.find((a: { consoleId?: string; kind: string }) => a.kind === 'console_down' && a.consoleId === consoleId);
  expect(down).toBeDefined();
  const item = page.getByTestId(`alert-${down.key}`);
  if (!(await item.isVisible())) await group.locator('summary').click();
  await item.getByRole('button', { name: /^Acknowledge/ }).click();
  const ack = page.getByRole('dialog', { name: /^Acknowledge:/ });
  await ack.getByLabel(/^Why/).fill('Initech console moved to the new host tonight');
  await ack.getByRole('button', { name: 'Acknowledge' }).click();
  await ack.waitFor({ state: 'detached' });
  await page.getByTestId('alert-said').filter({ hasText: /^Acknowledged:/ }).waitFor();
  await item.getByText(/^Acknowledged by msp-admin .*: Initech console moved to the new host tonight$/).waitFor();
  const after = (await api('GET', '/api/alerts')).body;
  expect(after.active.find((a: { key: string }) => a.key === down.key)).toMatchObject({ acknowledged: { by: 'msp-admin', comment: 'Initech console moved to the new host tonight' } });

  // silence the rule for the client, four hours
  await group.getByRole('button', { name: /^Silence Console down of initech/ }).click();
  const silence = page.getByRole('dialog', { name: 'Silence: Console down of initech' });
  await silence.getByLabel('For').selectOption('4h');
  await silence.getByLabel('Why').fill('Maintenance window at Initech');
  await silence.getByRole('button', { name: 'Silence' }).click();
  await silence.waitFor({ state: 'detached' });
  const silences = page.getByTestId('silences');
  await silences.getByRole('cell', { name: 'Console down of initech', exact: true }).waitFor();
  const s = (await api('GET', '/api/alerts')).body.silences.find((x: { comment: string }) => x.comment === 'Maintenance window at Initech');
  expect(s).toMatchObject({ kind: 'console_down', clientCode: 'initech', createdBy: 'msp-admin' });
  expect(Math.abs(Date.parse(s.endsAt) - Date.now() - 4 * 3600_000)).toBeLessThan(120_000);
  await expect(group.textContent()).resolves.toMatch(/silenced/);

  // the history, filtered to what fired
  // the select sits inside its label, so its accessible name is the label's words and its selected option's
  await page.getByRole('combobox', { name: /^Event/ }).selectOption('fired');
  const events = await page.locator('[data-testid="alerts-history"] tbody tr td:nth-child(2)').allTextContents();
  expect(events.length).toBeGreaterThan(0);
  expect(events.every((e) => e.startsWith('Fired'))).toBe(true);
  await checkScreen(page, 'fleet-alerts-acted');

  // the silence ends at once, confirmed in the app's own dialog
  await silences.getByRole('button', { name: /^End now/ }).first().click();
  await page.getByRole('dialog', { name: 'End this silence now?' }).getByRole('button', { name: 'End the silence' }).click();
  await silences.getByRole('cell', { name: 'Console down of initech', exact: true }).waitFor({ state: 'detached' });
  expect((await api('GET', '/api/alerts')).body.silences.some((x: { id: string }) => x.id === s.id)).toBe(false);
});

test('a client is registered and removed through the dashboard', async () => {
  const { page } = w;
  await page.goto('/clients');
  await page.getByRole('button', { name: 'Register a client' }).click();
  const dialog = page.getByRole('dialog', { name: 'Register a client' });
  await dialog.getByLabel('Code').fill('e2e-co');
  await dialog.getByLabel('Name', { exact: true }).fill('E2E Company');
  await dialog.getByLabel('Contacts').fill('Jane Doe; IT lead; jane@e2e.example');
  await dialog.getByRole('button', { name: 'Save client' }).click();
  await dialog.waitFor({ state: 'detached' });
  await page.getByTestId('client-e2e-co').waitFor();
  expect(await seriousViolations(page)).toEqual([]);
  await screenshot(page, 'fleet-clients');
  expect(await reachByTab(page, 'a[href="/clients/e2e-co"]')).toBe(true);
  await page.getByRole('link', { name: 'E2E Company' }).click();
  await page.getByText('Jane Doe, IT lead · jane@e2e.example').waitFor();
  expect(await seriousViolations(page)).toEqual([]);
  await page.getByRole('button', { name: 'Remove client' }).click();
  await page.getByRole('dialog', { name: 'Remove E2E Company' }).getByRole('button', { name: 'Remove', exact: true }).click();
  await page.waitForURL('**/clients');
  await page.getByTestId('client-acme').waitFor();
  expect(await page.getByTestId('client-e2e-co').count()).toBe(0);
});
