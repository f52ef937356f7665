import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import type { ConsoleClient } from '../../local/console-client';
import { auditMark, auditSince, seedUser, signedIn, stack, steppedUp } from '../support/stack';
import { startHttpsReceiver, type HttpsReceiver } from '../support/https-receiver';
import { checkScreen, DESKTOP, isDaveLocked as isLocked, launch, lockDave, openContext, PHONE, seriousViolations, screenshot, sidewaysScroll, signInAs, signInWithForm, stepUpInDialog, WEB, type Watched } from './support';

// Approvals as their users live them (issue 29). The administrator sets in the console which
// actions of a delegation need approval and who approves (no API call, no baseline); the helpdesk
// files an unlock; the notification carries the link; the approver opens it on a phone (390 px),
// signs in, reads the request titled in words and approves it; in the inbox an approver approves
// and rejects in place, with the reason in the list and the badge following at once.

const DAVE = seedUser('dave');
let browser: Browser;
let hook: HttpsReceiver;
let superC: ConsoleClient;
let original: Record<string, unknown>;
const contexts: Watched[] = [];
let requestId = '';

async function context(name: string, viewport = DESKTOP): Promise<Page> {
  const w = await openContext(browser, name);
  await w.page.setViewportSize(viewport);
  contexts.push(w);
  return w.page;
}

beforeAll(async () => {
  await lockDave();
  hook = await startHttpsReceiver(stack.directory.caFile);
  superC = await steppedUp('op-super');
  original = (await superC.get('/api/admin/approvals/settings')).body.settings;
  // what the approvers are sent (the channel itself is the admin test's subject)
  const r = await superC.put('/api/admin/notifications/channels/e2e-phone', { name: 'E2E phone', type: 'webhook', url: `${hook.url}/hook`, secret: randomBytes(24).toString('hex'), events: ['approval_requested'], enabled: true });
  expect(r.status).toBeLessThan(300);
  browser = await launch();
});
afterAll(async () => {
  for (const w of contexts) await w.context.close().catch(() => undefined);
  await browser?.close();
  superC = await steppedUp('op-super');
  await superC.delete('/api/admin/notifications/channels/e2e-phone');
  const now = (await superC.get('/api/admin/approvals/settings')).body.version;
  await superC.put('/api/admin/approvals/settings', { ...original, version: now });
  await lockDave(); // the other tests find dave locked out
  await hook?.close();
});

test('the administrator sets in the console which actions of a delegation need approval and who approves; same step-up and audit as the API', async () => {
  const page = await context('rules-admin');
  await signInAs(page, 'op-super', '/admin/approvals');
  const confirm = page.getByRole('dialog', { name: 'Confirm it is you' });
  const rule = page.getByTestId('rule-helpdesk-managed');
  await Promise.race([confirm.waitFor().catch(() => undefined), rule.waitFor().catch(() => undefined)]);
  if (await confirm.isVisible()) await stepUpInDialog(page, 'op-super');
  const mark = await auditMark();
  await rule.getByRole('checkbox', { name: 'Unlock account' }).check();
  await rule.getByRole('checkbox', { name: 'Reset password' }).check();
  await rule.getByRole('checkbox', { name: 'Holders of the role Approver' }).check();
  await rule.getByLabel('Approvals needed').selectOption('1');
  await page.getByLabel("The console's address in notification links (optional)").fill(WEB);
  await checkScreen(page, 'console-approval-rules');
  await page.getByRole('button', { name: 'Save approval rules' }).click();
  if (await confirm.isVisible().catch(() => false)) await stepUpInDialog(page, 'op-super');
  await page.getByText('Saved. New requests follow these rules').waitFor();
  const saved = (await superC.get('/api/admin/approvals/settings')).body.settings;
  expect(saved.delegations['helpdesk-managed']).toEqual({ requiresApproval: expect.arrayContaining(['users.unlock', 'users.password.reset']), approvers: { roles: ['approver'], operators: [] }, approvalsNeeded: 1 });
  expect(saved.consoleUrl).toBe(WEB);
  expect((await auditSince(mark)).find((r) => r.event === 'settings.approvals')).toMatchObject({ outcome: 'success', actor: { name: 'op-super' } });
});

test('the helpdesk files an unlock; the approvers are notified with a link to the request', async () => {
  const page = await context('rules-requester');
  await signInAs(page, 'op-helpdesk', `/users/${DAVE.guid}`);
  await page.getByRole('button', { name: 'Unlock (request approval)' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Reason').fill('Dave called from the front desk, identity checked');
  await dialog.getByLabel('Ticket', { exact: true }).fill('INC-E2E-29');
  await dialog.getByRole('button', { name: 'File request' }).click();
  await dialog.getByRole('button', { name: 'Open the request' }).click();
  await page.waitForURL(/\/approvals\/[0-9a-z-]+$/);
  requestId = page.url().split('/').pop()!;
  await page.getByRole('heading', { name: /^Unlock / }).waitFor();
  const sent = async () => hook.received.map((r) => JSON.parse(r.body)).find((b) => b.request?.id === requestId || String(b.link ?? '').endsWith(requestId));
  for (let i = 0; i < 50 && !(await sent()); i++) await page.waitForTimeout(200);
  expect((await sent())?.link).toBe(`${WEB}/approvals/${requestId}`);
});

test('on a phone, the approver opens the link, signs in, reads the request and approves it: nothing cut off, Sign out on screen', async () => {
  const page = await context('rules-approver-phone', PHONE);
  await page.goto(`/approvals/${requestId}`);
  await page.getByText('Sign in to review the request you were sent.').waitFor();
  await checkScreen(page, 'console-deeplink-signin');
  await page.setViewportSize(PHONE);
  await signInWithForm(page, 'op-approver');
  const title = page.getByRole('heading', { name: /^Unlock dave/ });
  await title.waitFor();
  expect(page.url()).toBe(`${WEB}/approvals/${requestId}`);
  // every detail on screen, nothing sideways, Sign out reachable
  expect((await sidewaysScroll(page)).overflow).toBeLessThanOrEqual(0);
  for (const text of ['Dave called from the front desk, identity checked', 'INC-E2E-29', 'op-helpdesk', 'Unlock account']) {
    const box = (await page.getByText(text, { exact: true }).first().boundingBox())!;
    expect([text, box.x >= 0 && box.x + box.width <= PHONE.width]).toEqual([text, true]);
  }
  const signOut = (await page.getByRole('button', { name: 'Sign out' }).boundingBox())!;
  expect(signOut.x + signOut.width).toBeLessThanOrEqual(PHONE.width);
  expect(await seriousViolations(page)).toEqual([]);
  await screenshot(page, 'console-deeplink-request-390');
  await page.getByRole('button', { name: 'Approve' }).click();
  await stepUpInDialog(page, 'op-approver');
  await page.getByRole('status').filter({ hasText: /executed/ }).waitFor();
  await page.getByTestId('request-state').filter({ hasText: 'Executed' }).waitFor();
  expect(await isLocked()).toBe(false);
  expect((await sidewaysScroll(page)).overflow).toBeLessThanOrEqual(0);
  await screenshot(page, 'console-deeplink-approved-390');
});

test('the inbox: reason and ticket in the list, approve and reject in place, the badge follows without a page change', async () => {
  await lockDave();
  const helpdesk = await signedIn('op-helpdesk', { fresh: true });
  const file = async (action: string, reason: string, parameters: Record<string, unknown> = {}) => {
    const r = await helpdesk.post('/api/approvals', { kind: 'action', action, target: DAVE.guid, parameters, reason, ticket: 'INC-E2E-30' });
    expect([r.status, r.body.code]).toEqual([201, undefined]);
    return r.body.id as string;
  };
  const unlock = await file('users.unlock', 'Locked again after the holidays');
  const reset = await file('users.password.reset', 'Forgot the new password too', { mustChange: true });

  const page = await context('rules-inbox');
  await signInAs(page, 'op-approver2', '/approvals');
  const list = page.getByTestId('requests');
  const row = (id: string) => page.getByTestId(`request-${id}`);
  await row(unlock).waitFor();
  await expect(row(unlock).textContent()).resolves.toContain('Locked again after the holidays');
  await expect(row(reset).textContent()).resolves.toContain('INC-E2E-30');
  const badge = async () => Number((await page.getByTestId('approvals-count').textContent().catch(() => '0')) || 0);
  const before = await badge();
  expect(before).toBeGreaterThanOrEqual(2);
  await checkScreen(page, 'console-inbox');

  await row(unlock).getByRole('button', { name: /^Approve Unlock dave/ }).click();
  await stepUpInDialog(page, 'op-approver2');
  await page.getByTestId('decided').filter({ hasText: /^Unlock dave.*executed/ }).waitFor();
  await row(unlock).waitFor({ state: 'detached' });
  await page.waitForFunction((n) => Number(document.querySelector('[data-testid="approvals-count"]')?.textContent ?? 0) === n, before - 1);
  expect(await isLocked()).toBe(false);

  await row(reset).getByRole('button', { name: /^Reject Reset the password of dave/ }).click();
  const reject = page.getByRole('dialog', { name: /^Reject: Reset the password of dave/ });
  await reject.getByLabel('Comment').fill('Call back from the registered number first');
  await reject.getByRole('button', { name: 'Reject' }).click();
  await reject.waitFor({ state: 'detached' });
  await row(reset).waitFor({ state: 'detached' });
  await page.waitForFunction((n) => Number(document.querySelector('[data-testid="approvals-count"]')?.textContent ?? 0) === n, before - 2);
  expect(page.url()).toBe(`${WEB}/approvals`); // no page change
  expect(await list.isVisible()).toBe(true);
  expect((await helpdesk.get(`/api/approvals/${reset}`)).body).toMatchObject({ state: 'rejected', comment: 'Call back from the registered number first' });
}, 120_000);
