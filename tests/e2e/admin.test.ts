import type { Browser } from 'playwright-core';
import { steppedUp } from '../support/stack';
import { criticalViolations, launch, openContext, reachByTab, screenshot, signInAs, stepUpInDialog, type Watched } from './support';

// The administrator's screens: the audit viewer with a filter and the chain verification, a role
// created and edited through the role editor (its refusal told in words), the LAPS diagnostics.

let browser: Browser;
let w: Watched;

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
});

test('the audit viewer lists rows, filters by event, and verifies the chain', async () => {
  const { page } = w;
  await page.goto('/audit');
  await page.locator('tbody tr').first().waitFor();
  await page.getByLabel('Event').fill('auth.login');
  await page.getByRole('button', { name: 'Filter' }).click();
  // the filtered page replaces the list: every row is a sign-in
  await page.waitForFunction(() => {
    const cells = [...document.querySelectorAll('tbody tr td:nth-child(3)')].map((td) => td.textContent);
    return cells.length > 0 && cells.every((c) => c === 'auth.login');
  });
  await page.getByRole('button', { name: 'Verify the chain' }).click();
  await expect(page.getByTestId('verify-result').textContent()).resolves.toMatch(/^The chain verifies \(\d+ recent rows checked now/);
  expect(await criticalViolations(page)).toEqual([]);
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
  await expect(row.textContent()).resolves.toContain('audit.read');

  await row.getByRole('button', { name: 'Edit E2E auditors' }).click();
  const edit = page.getByRole('dialog', { name: 'Edit role E2E auditors' });
  await edit.getByLabel('users.read').check();
  await screenshot(page, 'role-editor');
  await edit.getByRole('button', { name: 'Save role' }).click();
  await edit.waitFor({ state: 'detached' });
  await row.filter({ hasText: 'users.read' }).waitFor(); // the list is read again after the save
  await expect(row.textContent()).resolves.toMatch(/audit\.read, users\.read|users\.read, audit\.read/);
  expect(await criticalViolations(page)).toEqual([]);
  await screenshot(page, 'roles');
});

test('administration tabs are reachable by keyboard; diagnostics show the LAPS checks', async () => {
  const { page } = w;
  await page.goto('/admin/roles');
  await page.locator('body').click({ position: { x: 1, y: 1 } });
  expect(await reachByTab(page, 'a[href="/admin/diagnostics"]')).toBe(true);
  await page.keyboard.press('Enter');
  await page.getByTestId('diagnostics').getByText('laps_identity_ok').waitFor({ timeout: 20_000 });
  await expect(page.getByTestId('diagnostics').textContent()).resolves.toContain('laps_schema_windows');
});
