import fs from 'node:fs';
import { Client } from 'ldapts';
import type { Browser, Page } from 'playwright-core';
import { guidFromBuffer } from '../../lib/directory/guid';
import type { ConsoleClient } from '../../local/console-client';
import { stack, steppedUp } from '../support/stack';
import { browserState, seriousViolations, harText, launch, openContext, screenshot, signInAs, signInWithForm, stepUpInDialog, type Watched } from './support';

// Four eyes in three browsers: the helpdesk operator, who holds the reset only with approval,
// files a request from the user's page; the first approver opens the notification link, signs
// in and approves (1/2); the second approver finds it in the inbox, approves, and is shown the
// generated password once. The password then binds in the directory, and is in no storage, HAR
// or console line of any of the three.

const BASE = stack.directory.baseDn;
const USER_DN = `CN=e2e-user1,OU=Users,OU=Managed,${BASE}`;
let userGuid: string;
let browser: Browser;
let superC: ConsoleClient;
let original: Record<string, unknown>;
const contexts: Watched[] = [];
let requestId: string;
let password: string;

async function admin<T>(fn: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ url: stack.directory.dcs[0].url, tlsOptions: { ca: [fs.readFileSync(stack.directory.caFile)] } });
  await c.bind(stack.directory.admin.upn, stack.directory.admin.password);
  try {
    return await fn(c);
  } finally {
    await c.unbind();
  }
}
async function binds(dn: string, pw: string) {
  const c = new Client({ url: stack.directory.dcs[0].url, tlsOptions: { ca: [fs.readFileSync(stack.directory.caFile)] } });
  try {
    await c.bind(dn, pw);
    return true;
  } catch {
    return false;
  } finally {
    await c.unbind().catch(() => undefined);
  }
}

beforeAll(async () => {
  await admin(async (c) => {
    await c.del(USER_DN).catch(() => undefined);
    await c.add(USER_DN, {
      objectClass: ['top', 'person', 'organizationalPerson', 'user'],
      sAMAccountName: 'e2e-user1',
      userPrincipalName: `e2e-user1@${stack.directory.domain}`,
      displayName: 'E2E User One',
      unicodePwd: Buffer.from('"Initial-Pw!4101"', 'utf16le') as any,
      userAccountControl: '512',
    });
    const e = (await c.search(USER_DN, { scope: 'base', attributes: ['objectGUID'], explicitBufferAttributes: ['objectGUID'] })).searchEntries[0];
    userGuid = guidFromBuffer(e.objectGUID as Buffer);
  });
  // the helpdesk delegation's resets need two approvals by the Approver role
  superC = await steppedUp('op-super');
  original = (await superC.get('/api/admin/approvals/settings')).body.settings;
  const r = await superC.put('/api/admin/approvals/settings', {
    ...original,
    delegations: { ...(original.delegations as object), 'helpdesk-managed': { requiresApproval: ['users.password.reset'], approvers: { roles: ['approver'], operators: [] }, approvalsNeeded: 2 } },
  });
  expect(r.status).toBe(200);
  browser = await launch();
});

afterAll(async () => {
  for (const w of contexts) await w.context.close().catch(() => undefined);
  await browser?.close();
  superC = await steppedUp('op-super');
  await superC.put('/api/admin/approvals/settings', original);
  await admin((c) => c.del(USER_DN)).catch(() => undefined);
});

async function context(name: string, username?: string): Promise<Page> {
  const w = await openContext(browser, name);
  contexts.push(w);
  if (username) await signInAs(w.page, username);
  return w.page;
}

test('the requester holds the reset only with approval and files a request from the user page', async () => {
  const page = await context('approvals-requester', 'op-helpdesk');
  await page.goto('/users');
  await page.getByLabel('Search users').fill('e2e-user1');
  await page.getByRole('link', { name: 'E2E User One' }).click();
  await page.getByRole('heading', { name: 'E2E User One' }).waitFor();
  await page.getByRole('button', { name: 'Reset password (request approval)' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByText('only with approval').waitFor();
  await dialog.getByLabel(/must change the password/).uncheck(); // so that the new password binds below
  await dialog.getByLabel('Reason').fill('forgot the password, called from the front desk');
  await dialog.getByLabel('Ticket', { exact: true }).fill('INC-E2E-10');
  await dialog.getByRole('button', { name: 'File request' }).click();
  await dialog.getByText('Request filed').waitFor();
  await dialog.getByRole('button', { name: 'Open the request' }).click();
  await page.waitForURL(/\/approvals\/[0-9a-z]{9}-[0-9a-f]{16}$/);
  requestId = page.url().split('/').pop()!;
  await page.getByRole('heading', { name: 'Reset the password of e2e-user1' }).waitFor(); // titled in words, not users.password.reset
  await expect(page.getByTestId('request-state').textContent()).resolves.toBe('Waiting for approval');
  await expect(page.getByTestId('request-approvals').textContent()).resolves.toContain('0/2');
  expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(0); // never one's own
  // the "To approve" list answers slowly and the user moves on to "Mine" meanwhile: the late
  // answer must not fill the tab now shown (a CI run once saw an empty "Mine")
  await page.route('**/api/approvals?view=to_approve', async (route) => {
    await new Promise((r) => setTimeout(r, 1000));
    await route.continue();
  });
  const late = page.waitForResponse((res) => res.url().includes('view=to_approve'));
  await page.getByRole('link', { name: '← Approvals' }).click();
  await page.getByRole('tab', { name: /Mine/ }).click();
  await page.getByRole('link', { name: 'Reset the password of e2e-user1' }).first().waitFor();
  await late;
  await page.waitForTimeout(200); // what the late answer would have rendered
  expect(await page.getByRole('tab', { name: /Mine/ }).getAttribute('aria-selected')).toBe('true');
  expect(await page.getByRole('link', { name: 'Reset the password of e2e-user1' }).count()).toBeGreaterThan(0);
  await page.unroute('**/api/approvals?view=to_approve');
  await screenshot(page, 'approvals-mine');
});

test('the first approver opens the notification link, signs in, lands on the request and approves (1/2)', async () => {
  const page = await context('approvals-first');
  await page.goto(`/approvals/${requestId}`);
  await signInWithForm(page, 'op-approver');
  await page.getByRole('heading', { name: 'Reset the password of e2e-user1' }).waitFor();
  expect(page.url()).toMatch(new RegExp(`/approvals/${requestId}$`));
  await expect(page.getByTestId('approvals-count').textContent()).resolves.toMatch(/^[1-9]\d*$/);
  expect(await seriousViolations(page)).toEqual([]);
  await screenshot(page, 'approval-request');
  await page.getByRole('button', { name: 'Approve' }).click();
  await stepUpInDialog(page, 'op-approver');
  await page.getByText('approved (1/2), waiting for another approver').waitFor();
  await expect(page.getByTestId('request-state').textContent()).resolves.toBe('Waiting for approval');
});

test('the second approver finds it in the inbox, approves, and is shown the new password once', async () => {
  const page = await context('approvals-second', 'op-approver2');
  await page.goto('/approvals');
  await page.getByRole('tab', { name: /To approve/ }).click();
  const row = page.locator('tbody tr', { hasText: 'E2E User One' }).or(page.locator('tbody tr', { hasText: 'e2e-user1' }));
  await row.first().getByRole('link').click();
  await page.getByRole('button', { name: 'Approve' }).click();
  await stepUpInDialog(page, 'op-approver2');
  const dialog = page.getByRole('dialog', { name: /New password/ });
  password = (await dialog.getByTestId('secret').textContent())!;
  expect(password.length).toBeGreaterThanOrEqual(12);
  await page.getByText('Reset the password of e2e-user1: executed (succeeded).').waitFor();
  await expect(page.getByTestId('request-state').textContent()).resolves.toContain('Executed');
  expect(await binds(USER_DN, password)).toBe(true); // the directory really has it
  await dialog.getByRole('button', { name: 'Close', exact: true }).click();
  await dialog.waitFor({ state: 'detached' });
  expect(await page.content()).not.toContain(password);
});

test('the requester sees the request executed', async () => {
  const page = contexts[0].page;
  await page.goto(`/approvals/${requestId}`);
  await page.getByTestId('request-state').filter({ hasText: 'Executed' }).waitFor();
  await expect(page.getByTestId('request-approvals').textContent()).resolves.toMatch(/^2\/2.*op-approver.*op-approver2|^2\/2.*op-approver2.*op-approver/);
});

test('the generated password is in no storage, URL, history, HAR or console line of any browser', async () => {
  for (const w of contexts) {
    expect(await browserState(w)).not.toContain(password);
    expect(w.consoleLines.join('\n')).not.toContain(password);
    await w.context.close();
    expect(harText(w)).not.toContain(password);
  }
});
