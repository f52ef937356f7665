import fs from 'node:fs';
import { Client } from 'ldapts';
import type { Browser, Page, Route } from 'playwright-core';
import { guidFromBuffer } from '../../lib/directory/guid';
import { signedIn, stack, steppedUp } from '../support/stack';
import { browserState, checkScreen, launch, openContext, PHONE, signInAs, stepUpInDialog, type Watched } from './support';

// Issue 31 in the browser: the approver of a bulk password reset approves it on a phone, then the
// request's page offers the one download, which runs the reset and saves the CSV (held nowhere by
// the app); an administrator of a console with fewer than two DCs is warned above every screen.

const BASE = stack.directory.baseDn;
const OU = `OU=BulkResetE2E,OU=Managed,${BASE}`;
const NAMES = ['bre-1', 'bre-2'];
const guids: Record<string, string> = {};
let browser: Browser;
let original: Record<string, unknown>;
const contexts: Watched[] = [];

async function admin<T>(fn: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ url: stack.directory.dcs[0].url, tlsOptions: { ca: [fs.readFileSync(stack.directory.caFile)] } });
  await c.bind(stack.directory.admin.upn, stack.directory.admin.password);
  try {
    return await fn(c);
  } finally {
    await c.unbind();
  }
}
async function removeOu() {
  await admin(async (c) => {
    for (const n of NAMES) await c.del(`CN=${n},${OU}`).catch(() => undefined);
    await c.del(OU).catch(() => undefined);
  });
}
async function context(name: string): Promise<Watched> {
  const w = await openContext(browser, name);
  contexts.push(w);
  return w;
}

beforeAll(async () => {
  await removeOu();
  await admin(async (c) => {
    await c.add(OU, { objectClass: ['top', 'organizationalUnit'] });
    for (const n of NAMES) {
      const dn = `CN=${n},${OU}`;
      await c.add(dn, { objectClass: ['top', 'person', 'organizationalPerson', 'user'], sAMAccountName: n, userPrincipalName: `${n}@${stack.directory.domain}`, unicodePwd: Buffer.from('"Initial-E2E-Pw!3102"', 'utf16le') as any, userAccountControl: '512' });
      const r = await c.search(dn, { scope: 'base', attributes: ['objectGUID'], explicitBufferAttributes: ['objectGUID'] });
      guids[n] = guidFromBuffer(r.searchEntries[0].objectGUID as Buffer);
    }
  });
  const superC = await steppedUp('op-super');
  original = (await superC.get('/api/admin/approvals/settings')).body.settings;
  const r = await superC.put('/api/admin/approvals/settings', {
    ...original,
    delegations: { ...(original.delegations as object), 'helpdesk-managed': { requiresApproval: ['users.password.reset'], approvers: { roles: ['approver'], operators: [] }, approvalsNeeded: 1 } },
  });
  expect(r.status).toBe(200);
  // give the second DC the users too (the console may read either)
  await new Promise((res) => setTimeout(res, 3000));
  browser = await launch();
});
afterAll(async () => {
  for (const w of contexts) await w.context.close().catch(() => undefined);
  await browser?.close();
  const superC = await steppedUp('op-super');
  const now = (await superC.get('/api/admin/approvals/settings')).body.version;
  await superC.put('/api/admin/approvals/settings', { ...original, version: now });
  await removeOu();
});

test('bulk reset on a phone: approve, then the one download runs it; the CSV holds the passwords, the app keeps none', async () => {
  const helpdesk = await signedIn('op-helpdesk');
  const c = await helpdesk.post('/api/approvals', { kind: 'bulk', action: 'users.password.reset', targets: NAMES.map((n) => guids[n]), parameters: { mustChange: true }, reason: 'two new starters', ticket: 'E2E-31' });
  expect(c.status).toBe(201);
  const id = c.body.id;

  const w = await context('bulk-reset-approver');
  const { page } = w;
  await page.setViewportSize(PHONE);
  await signInAs(page, 'op-approver', `/approvals/${id}`);
  await page.getByRole('heading', { level: 1 }).waitFor();
  const approve = page.getByRole('button', { name: 'Approve' });
  await approve.click();
  const confirm = page.getByRole('dialog', { name: 'Confirm it is you' });
  const download = page.getByRole('button', { name: 'Reset and download the passwords' });
  await Promise.race([confirm.waitFor().catch(() => undefined), download.waitFor().catch(() => undefined)]);
  if (await confirm.isVisible()) await stepUpInDialog(page, 'op-approver');
  await download.waitFor();
  await page.getByTestId('request-download').waitFor();
  await checkScreen(page, 'console-bulk-reset-download');

  const [file] = await Promise.all([page.waitForEvent('download'), download.click()]);
  expect(file.suggestedFilename()).toBe(`passwords-${id}.csv`);
  const saved = await file.path();
  const text = fs.readFileSync(saved!, 'utf8');
  fs.rmSync(saved!, { force: true });
  const lines = text.trim().split('\r\n');
  expect(lines[0]).toBe('"username","dn","outcome","password","code"');
  expect(lines).toHaveLength(3);
  const passwords = lines.slice(1).map((l) => [...l.matchAll(/"((?:[^"]|"")*)"/g)].map((m) => m[1])[3]);
  for (const p of passwords) expect(p).toMatch(/^.{20}$/);

  // the page says where the passwords are, the button is gone, the request is executed
  await page.getByRole('status').filter({ hasText: 'The passwords are in' }).waitFor();
  await expect(download.count()).resolves.toBe(0);
  await page.locator('[data-testid="request-state"] [data-state="executed"]').waitFor();
  await checkScreen(page, 'console-bulk-reset-done');
  // nothing of them kept by the app: not in storage, cookies or the page's text
  const state = await browserState(w);
  const shown = await page.evaluate(() => document.body.innerText);
  for (const p of passwords) {
    expect(state).not.toContain(p);
    expect(shown).not.toContain(p);
  }
});

/** GET /api/auth/me as a one-DC console answers it (the test stack has two DCs): administrators get the notice. */
async function asOneDcConsole(route: Route) {
  const r = await route.fetch();
  if (!r.ok()) return route.fulfill({ response: r }); // before sign-in: 401 as it is
  const body = await r.json();
  await route.fulfill({ response: r, json: { ...body, notices: body.permissions.includes('settings.manage') ? [{ code: 'dc_fewer_than_two', severity: 'warning', count: 1 }] : [] } });
}

test('an administrator of a console with fewer than two DCs is warned above every screen; an operator is not', async () => {
  const w = await context('dc-warning');
  const { page } = w;
  // the answer a one-DC console gives (the test stack has two DCs): GET /api/auth/me with its notice
  await page.route('**/api/auth/me', asOneDcConsole);
  await signInAs(page, 'op-super', '/computers');
  const banner = page.getByTestId('notice-dc_fewer_than_two');
  await banner.waitFor();
  await expect(banner.textContent()).resolves.toContain('Only one domain controller is configured');
  await page.locator('table.data tbody tr a').first().waitFor();
  await checkScreen(page, 'console-dc-warning');
  await banner.getByRole('link', { name: 'See Diagnostics' }).click();
  await page.getByRole('heading', { name: /Administration/ }).waitFor();

  const other = await context('dc-warning-operator');
  await other.page.route('**/api/auth/me', asOneDcConsole);
  await signInAs(other.page, 'op-helpdesk', '/computers');
  await other.page.locator('table.data tbody tr a').first().waitFor();
  await expect(other.page.getByTestId('admin-notices').count()).resolves.toBe(0);
});
