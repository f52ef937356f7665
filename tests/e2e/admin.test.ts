import fs from 'node:fs';
import type { Browser, Locator, Page } from 'playwright-core';
import { deleteRecord } from '../../lib/store/records';
import { seedUser, stack, steppedUp, store } from '../support/stack';
import { seriousViolations, launch, openContext, reachByTab, screenshot, signInAs, stepUpInDialog, type Watched } from './support';

// The administrator's screens: the audit viewer with a filter and the chain verification, a role
// created and edited through the role editor (its refusal told in words), the LAPS diagnostics,
// a group member added from a search, a notification channel created and edited.

let browser: Browser;
let w: Watched;
const sales = stack.directory.groups.find((g) => g.name === 'GG-Sales')!;

/** The step-up of the role test usually still holds; confirm again only if the app asks. */
async function stepUpIfAsked(page: Page, done: Locator) {
  const confirm = page.getByRole('dialog', { name: 'Confirm it is you' });
  await Promise.race([confirm.waitFor().catch(() => undefined), done.waitFor().catch(() => undefined)]);
  if (await confirm.isVisible()) await stepUpInDialog(page, 'op-super');
}

beforeAll(async () => {
  browser = await launch();
  w = await openContext(browser, 'admin');
  await signInAs(w.page, 'op-super');
});
afterAll(async () => {
  await w?.context.close().catch(() => undefined);
  await browser?.close();
  const c = await steppedUp('op-super');
  await c.delete('/api/admin/roles/e2e-auditors');
  await c.delete(`/api/groups/${sales.guid}/members/${seedUser('alice').guid}`);
  await c.delete('/api/admin/notifications/channels/e2e-hook');
  await deleteRecord(store, 'INSTANCE', 'BRANDING');
});

test('the audit viewer lists rows, filters by event, and verifies the chain', async () => {
  const { page } = w;
  await page.goto('/audit');
  await page.locator('tbody tr').first().waitFor();
  await page.getByLabel('Event').selectOption('auth.login'); // a picker: the events in words, the code beside
  await page.getByRole('button', { name: 'Filter' }).click();
  // the filtered page replaces the list: every row is a sign-in
  await page.waitForFunction(() => {
    const cells = [...document.querySelectorAll('tbody tr td:nth-child(3)')].map((td) => td.textContent);
    return cells.length > 0 && cells.every((c) => c === 'auth.login');
  });
  await page.getByRole('button', { name: 'Verify the chain' }).click();
  await expect(page.getByTestId('verify-result').textContent()).resolves.toMatch(/^The chain verifies \(\d+ recent rows checked now/);
  expect(await seriousViolations(page)).toEqual([]);
  await screenshot(page, 'audit');
});

test('a role is created and edited in the role editor; a LAPS permission without computers.read is refused in words', async () => {
  const { page } = w;
  await page.goto('/admin/roles');
  await page.getByRole('button', { name: 'New role' }).click();
  const dialog = page.getByRole('dialog', { name: 'New role' });
  await dialog.getByLabel('Name', { exact: true }).fill('E2E auditors');
  await dialog.getByLabel('computers.laps.read').check();
  await dialog.getByRole('button', { name: 'Save role' }).click();
  await stepUpInDialog(page, 'op-super'); // a role change needs the instance's step-up
  await expect(dialog.getByRole('alert').textContent()).resolves.toContain('also needs computers.read');
  await dialog.getByLabel('computers.laps.read').uncheck();
  await dialog.getByLabel('audit.read').check();
  await dialog.getByRole('button', { name: 'Save role' }).click();
  await dialog.waitFor({ state: 'detached' });
  const row = page.getByTestId('role-e2e-auditors');
  await expect(row.textContent()).resolves.toContain('Read the audit audit.read'); // the permission in words, its code beside

  await row.getByRole('button', { name: 'Edit E2E auditors' }).click();
  const edit = page.getByRole('dialog', { name: 'Edit role E2E auditors' });
  await edit.getByLabel('users.read').check();
  await screenshot(page, 'role-editor');
  await edit.getByRole('button', { name: 'Save role' }).click();
  await edit.waitFor({ state: 'detached' });
  await row.filter({ hasText: 'users.read' }).waitFor(); // the list is read again after the save
  await expect(row.locator('ul.perms li').allTextContents()).resolves.toEqual(['See users users.read', 'Read the audit audit.read']);
  expect(await seriousViolations(page)).toEqual([]);
  await screenshot(page, 'roles');
});

test('administration tabs are reachable by keyboard; diagnostics show the LAPS checks', async () => {
  const { page } = w;
  await page.goto('/admin/roles');
  await page.locator('body').click({ position: { x: 1, y: 1 } });
  expect(await reachByTab(page, 'a[href="/admin/diagnostics"]')).toBe(true);
  await page.keyboard.press('Enter');
  await page.getByTestId('diagnostics').getByText('laps_identity_ok').waitFor({ timeout: 30_000 });
  // a sentence first, the code below it
  await page.getByTestId('diagnostics').getByText('The LAPS account signs in.').waitFor();
  await expect(page.getByTestId('diagnostics').textContent()).resolves.toContain('laps_schema_windows');
});

test('a member is added to a group from a search; the answer tells each member', async () => {
  const { page } = w;
  await page.goto(`/groups/${sales.guid}`);
  await page.getByRole('button', { name: 'Add members' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add members to GG-Sales' });
  await dialog.getByLabel('Search members to add').fill('alice');
  await dialog.getByRole('checkbox', { name: /alice/i }).check();
  await dialog.getByRole('button', { name: 'Add 1 member' }).click();
  const status = dialog.getByRole('status');
  await stepUpIfAsked(page, status);
  await expect(status.textContent()).resolves.toBe('Members added.');
  await expect(dialog.getByRole('list', { name: 'Result per member' }).textContent()).resolves.toMatch(/alice.*: added$/i);
  await dialog.getByRole('button', { name: 'Close', exact: true }).click();
  await page.getByRole('listitem').filter({ hasText: /alice/i }).first().waitFor(); // the member list is read again
});

test('a notification channel is created and edited; only its URL origin is ever shown', async () => {
  const { page } = w;
  await page.goto('/admin/channels');
  await page.getByRole('button', { name: 'New channel' }).click();
  const dialog = page.getByRole('dialog', { name: 'New notification channel' });
  await dialog.getByLabel(/^Id/).fill('e2e-hook');
  await dialog.getByLabel('Name', { exact: true }).fill('E2E hook');
  await dialog.getByLabel(/^URL/).fill('https://hooks.example.test/e2e-secret-path');
  await dialog.getByLabel(/^Signing secret/).fill('e2e-signing-secret-'.repeat(3));
  await dialog.getByRole('button', { name: 'Save channel' }).click();
  const row = page.getByTestId('channel-e2e-hook');
  await stepUpIfAsked(page, row);
  await expect(row.textContent()).resolves.toContain('https://hooks.example.test');
  await expect(row.textContent()).resolves.not.toContain('e2e-secret-path');

  await row.getByRole('button', { name: 'Edit E2E hook' }).click();
  const edit = page.getByRole('dialog', { name: 'Edit channel E2E hook' });
  await edit.getByLabel(/request was decided/).check();
  await edit.getByLabel('Enabled').uncheck();
  await edit.getByRole('button', { name: 'Save channel' }).click(); // URL and secret left empty: kept
  await edit.waitFor({ state: 'detached' });
  await row.filter({ hasText: 'approval_decided' }).waitFor();
  await expect(row.textContent()).resolves.toContain('disabled');
  expect(await seriousViolations(page)).toEqual([]);
});

test('the instance identification: title and accent in the top bar and tab title; on the sign-in page only once it is shown there', async () => {
  const { page } = w;
  await page.goto('/admin/identification');
  const form = page.getByRole('form', { name: 'Instance identification' });
  await form.getByLabel(/^Title/).fill('E2E Acme helpdesk');
  await form.getByLabel('Accent colour').fill('#0a7b50');
  await form.getByRole('button', { name: 'Save identification' }).click();
  await stepUpIfAsked(page, form.getByRole('status'));
  await form.getByRole('status').waitFor();

  // a visitor who is not signed in does not see it yet
  const visitor = await openContext(browser, 'branding-visitor');
  try {
    await visitor.page.goto('/');
    await visitor.page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await visitor.page.getByTestId('signin-instance').count()).toBe(0);
    expect(await visitor.page.title()).not.toContain('E2E Acme');

    // the operator sees it at the next page load: top bar, tab title, accent
    await page.goto('/admin/identification');
    await expect(page.getByTestId('instance-title').textContent()).resolves.toBe('E2E Acme helpdesk');
    await page.waitForFunction(() => document.title.startsWith('E2E Acme helpdesk'));
    expect(await page.evaluate(() => getComputedStyle(document.querySelector('.topbar')!).backgroundColor)).toBe('rgb(10, 123, 80)');

    await form.getByLabel(/Show the title on the sign-in page/).check();
    await form.getByRole('button', { name: 'Save identification' }).click();
    await stepUpIfAsked(page, form.getByRole('status'));
    await form.getByRole('status').waitFor();
    await visitor.page.reload();
    await expect(visitor.page.getByTestId('signin-instance').textContent()).resolves.toBe('E2E Acme helpdesk');
    expect(await visitor.page.title()).toBe('E2E Acme helpdesk · Sign in');
    expect(await seriousViolations(visitor.page)).toEqual([]);
    await screenshot(visitor.page, 'sign-in-branded');
  } finally {
    await visitor.context.close();
  }
  expect(await seriousViolations(page)).toEqual([]);
});

test('operators, the protection list and the LAPS account are shown to the administrator', async () => {
  const { page } = w;
  await page.goto('/admin/operators');
  await page.getByRole('button', { name: 'Delete op-branch' }).waitFor();
  await expect(page.locator('tbody').textContent()).resolves.toContain('directory password');
  expect(await page.getByRole('button', { name: 'Delete op-super' }).count()).toBe(0); // not one's own record
  await page.goto('/admin/protection');
  await page.getByTestId('protected-groups').locator('strong', { hasText: 'GG-VIP' }).waitFor();
  await page.getByTestId('laps-account').getByText(stack.directory.technicalAccounts.laps.upn).waitFor();
  expect(await seriousViolations(page)).toEqual([]);
});

test('a watch list shows the disabled users and downloads as CSV', async () => {
  const { page } = w;
  await page.goto('/watch-lists/disabled');
  await page.getByTestId('watch-list').getByRole('cell', { name: 'carol', exact: true }).waitFor();
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('watch-csv').click()]);
  expect(download.suggestedFilename()).toMatch(/^watch-disabled-\d{4}-\d{2}-\d{2}\.csv$/);
  const csv = fs.readFileSync((await download.path())!, 'utf8');
  expect(csv.split('\r\n')[0]).toContain('"username"');
  expect(csv).toContain('"carol"');
  expect(await seriousViolations(page)).toEqual([]);
});

test("the baseline: this console's own file checks as unchanged, then imports", async () => {
  const { page } = w;
  const baseline = (await (await steppedUp('op-super')).get('/api/admin/baseline')).body;
  await page.goto('/admin/baseline');
  await page.getByLabel('Baseline file (JSON)').setInputFiles({ name: 'baseline.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(baseline)) });
  await page.getByRole('button', { name: 'Check the baseline' }).click();
  const summary = page.getByTestId('baseline-summary');
  await stepUpIfAsked(page, summary);
  await expect(summary.textContent()).resolves.toContain('Unchanged roles');
  await page.getByRole('button', { name: 'Import', exact: true }).click();
  await page.getByRole('status').filter({ hasText: 'Imported.' }).waitFor();
  expect(await seriousViolations(page)).toEqual([]);
});
