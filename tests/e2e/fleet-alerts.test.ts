import { createHmac, randomBytes } from 'node:crypto';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import type { Browser } from 'playwright-core';
import { createStore } from '../../lib/store';
import { deleteRecord } from '../../lib/store/records';
import { windowKey } from '../../lib/store/window';
import { adminAuth, call } from '../integration/fleet/support';
import { stack } from '../support/stack';
import { startHttpsReceiver, type HttpsReceiver } from '../support/https-receiver';
import { criticalViolations, launch, reachByTab, screenshot, type Watched } from './support';
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
const fleetStore = createStore({ endpoint: fleet.dynamodbEndpoint, tableName: fleet.tableName });
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

  await row.getByRole('button', { name: 'Send a test to E2E receiver' }).click();
  await expect(page.getByTestId('test-result-E2E receiver').filter({ hasText: /^Test (delivered|failed)/ }).textContent()).resolves.toBe('Test delivered (HTTP 204).');
  const got = hook.received.filter((r) => r.url === hookPath);
  expect(got).toHaveLength(1);
  const body = JSON.parse(got[0].body);
  expect(body).toMatchObject({ schema: 1, source: 'fleet', events: [{ event: 'test', alert: null }] });
  const ts = String(got[0].headers['x-fleet-timestamp']);
  expect(got[0].headers['x-fleet-signature']).toBe(`sha256=${createHmac('sha256', secret).update(`${ts}.${got[0].body}`).digest('hex')}`);
  expect(await criticalViolations(page)).toEqual([]);
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
  expect(await criticalViolations(page)).toEqual([]);
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
  expect(await criticalViolations(page)).toEqual([]);
  await screenshot(page, 'fleet-console');
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
  expect(await criticalViolations(page)).toEqual([]);
  await screenshot(page, 'fleet-clients');
  expect(await reachByTab(page, 'a[href="/clients/e2e-co"]')).toBe(true);
  await page.getByRole('link', { name: 'E2E Company' }).click();
  await page.getByText('Jane Doe, IT lead · jane@e2e.example').waitFor();
  expect(await criticalViolations(page)).toEqual([]);
  await page.getByRole('button', { name: 'Remove client' }).click();
  await page.getByRole('dialog', { name: 'Remove E2E Company' }).getByRole('button', { name: 'Remove', exact: true }).click();
  await page.waitForURL('**/clients');
  await page.getByTestId('client-acme').waitFor();
  expect(await page.getByTestId('client-e2e-co').count()).toBe(0);
});
