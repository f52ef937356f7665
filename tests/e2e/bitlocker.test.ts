import type { Browser } from 'playwright-core';
import { loadConfig } from '../../lib/config';
import { bitlockerWindow } from '../../lib/password-service/service-side/service';
import { windowKey } from '../../lib/store/window';
import { serviceStore } from '../support/stack';
import { browserState, checkScreen, computer, harText, launch, openContext, seriousViolations, signInAs, stepUpInDialog, type Watched } from './support';

// A locked-out laptop at boot (issue 33): the helpdesk finds the computer by the key id the user
// reads off the recovery screen, opens its "Recovery keys", reveals the key (ticket, confirmation,
// step-up), reads it out group by group; it is gone after 30 s and after close, and in no storage,
// HAR or console line. Desktop and 390 px, axe on each screen.

interface RecoverySeed {
  keyId: string;
  volumeGuid: string;
  date: string;
  password: string;
}
const std = computer('WS-STD-01') as ReturnType<typeof computer> & { bitlocker: RecoverySeed[] };
// the newest entry is listed first
const newest = [...std.bitlocker].sort((a, b) => b.date.localeCompare(a.date))[0];
const secret = newest.password;
const prefix = newest.keyId.slice(0, 8);
const DIGITS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];

let browser: Browser;
let w: Watched;

beforeAll(async () => {
  await serviceStore.delete({ Key: windowKey(bitlockerWindow(loadConfig({}).config, std.guid)) });
  browser = await launch();
  w = await openContext(browser, 'bitlocker');
  await w.page.clock.install(); // the 30-second hide runs on the page's clock, moved forward below
});
afterAll(async () => {
  await w?.context.close().catch(() => undefined);
  await browser?.close();
});

test('the key id read off the recovery screen finds the computer', async () => {
  const { page } = w;
  await signInAs(page, 'op-helpdesk', '/computers');
  await page.goto('/computers'); // the inbox comes first when requests wait for this operator
  await page.getByLabel('Search computers').fill(prefix);
  await page.getByRole('link', { name: 'WS-STD-01', exact: true }).click();
  await page.getByRole('heading', { name: 'WS-STD-01' }).waitFor();
});

test('the computer page lists its recovery keys (key id, volume, date), never a key', async () => {
  const { page } = w;
  const panel = page.getByTestId('recovery-keys');
  await panel.getByRole('heading', { name: 'Recovery keys' }).waitFor();
  await panel.getByTestId(`recovery-${prefix}`).waitFor();
  const rows = await panel.locator('tbody tr').allInnerTexts();
  expect(rows).toHaveLength(2);
  expect(rows[0]).toContain(newest.keyId.slice(0, 8));
  expect(rows[0]).toContain(newest.volumeGuid);
  for (const k of std.bitlocker) expect(await page.content()).not.toContain(k.password);
  await checkScreen(page, 'bitlocker-panel');
});

test('reveal: ticket and confirmation, then the step-up; eight groups of six digits, read out group by group, hidden after 30 s', async () => {
  const { page } = w;
  await page.getByRole('button', { name: `Reveal recovery key ${prefix}` }).click();
  const dialog = page.getByRole('dialog', { name: `Recovery key ${prefix} of WS-STD-01` });
  const reveal = dialog.getByRole('button', { name: 'Reveal' });
  expect(await reveal.isDisabled()).toBe(true);
  await dialog.getByLabel('Ticket', { exact: true }).fill('INC-E2E-BL-1');
  await dialog.getByLabel(/I need this recovery key/).check();
  await reveal.click();
  await stepUpInDialog(page, 'op-helpdesk');
  await dialog.getByTestId('secret-group').first().waitFor();
  const groups = await dialog.getByTestId('secret-group').allInnerTexts();
  expect(groups).toEqual(secret.split('-'));
  expect(groups).toHaveLength(8);
  expect(groups.every((g) => /^\d{6}$/.test(g))).toBe(true);
  await dialog.getByRole('button', { name: 'Read out' }).click();
  const said = await dialog.getByTestId('readout').getByRole('listitem').allInnerTexts();
  expect(said).toHaveLength(8);
  expect(said[0]).toBe(`Group 1: ${[...groups[0]].map((d) => DIGITS[Number(d)]).join(' ')}`);
  expect(await seriousViolations(page)).toEqual([]);
  await checkScreen(page, 'bitlocker-reveal');

  await page.clock.fastForward('00:31');
  await dialog.getByText('The recovery key was hidden after 30 seconds', { exact: false }).waitFor();
  for (const g of groups) expect(await page.content()).not.toContain(`>${g}<`);
  await dialog.getByRole('button', { name: 'Close', exact: true }).click();
  await dialog.waitFor({ state: 'detached' });
});

test('closed before the 30 s, the key is gone from the page at once', async () => {
  const { page } = w;
  await page.getByRole('button', { name: `Reveal recovery key ${prefix}` }).click();
  const dialog = page.getByRole('dialog', { name: `Recovery key ${prefix} of WS-STD-01` });
  await dialog.getByLabel('Ticket', { exact: true }).fill('INC-E2E-BL-2');
  await dialog.getByLabel(/I need this recovery key/).check();
  await dialog.getByRole('button', { name: 'Reveal' }).click();
  await expect(dialog.getByTestId('secret-group').first().innerText()).resolves.toBe(secret.split('-')[0]);
  await dialog.getByRole('button', { name: 'Close', exact: true }).click();
  await dialog.waitFor({ state: 'detached' });
  for (const g of secret.split('-')) expect(await page.content()).not.toContain(`>${g}<`);
});

test('the revealed key is in no storage, URL, history, HAR or console line', async () => {
  const state = await browserState(w);
  expect(state).not.toContain(secret);
  expect(w.consoleLines.join('\n')).not.toContain(secret);
  await w.context.close(); // writes the HAR
  const har = harText(w);
  expect(har).toContain('/bitlocker/');
  expect(har).not.toContain(secret);
});

test('an administrator sees the BitLocker rights checked per scope on the diagnostics page', async () => {
  const admin = await openContext(browser, 'bitlocker-diagnostics');
  try {
    await signInAs(admin.page, 'op-super', '/admin/diagnostics');
    await admin.page.goto('/admin/diagnostics');
    const diag = admin.page.getByTestId('diagnostics');
    await diag.getByText('bitlocker_identity_ok').waitFor({ timeout: 30_000 });
    await diag.getByRole('heading', { name: /^BitLocker: Managed/ }).first().waitFor();
    await expect(diag.textContent()).resolves.toContain('The BitLocker account can read the recovery key here.');
    await expect(diag.textContent()).resolves.toContain("The console's own account lists the recovery keys here without reading them.");
    await checkScreen(admin.page, 'bitlocker-diagnostics');
  } finally {
    await admin.context.close().catch(() => undefined);
  }
});
