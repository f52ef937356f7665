import type { Browser, Page } from 'playwright-core';
import { nextCode, seedUser, stack } from '../support/stack';
import { browserState, checkScreen, launch, openContext, signInWithForm, type Watched } from './support';

// Issue 29, helpdesk context and keyboard use: a user's page says when the account locked out,
// its bad passwords with the DC that counted them, and its groups; a password reset done with the
// keyboard alone ("unlock too", the step-up, the read-out that spells each character, Esc), focus
// back on the control that opened each dialog (the reset, a confirmation); the password kept
// nowhere in the browser.

let browser: Browser;
let w: Watched;
let page: Page;

beforeAll(async () => {
  browser = await launch();
  w = await openContext(browser, 'helpdesk-keyboard');
  page = w.page;
  await page.goto('/');
  await signInWithForm(page, 'op-super');
});
afterAll(async () => {
  await w?.context.close().catch(() => undefined);
  await browser?.close();
});

const focused = (p: Page) => p.evaluate(() => ({ tag: document.activeElement?.tagName ?? '', text: document.activeElement?.textContent?.trim() ?? '', name: document.activeElement?.getAttribute('name') ?? '', type: document.activeElement?.getAttribute('type') ?? '' }));

/** Tab until a button with exactly this text has focus (keyboard only). */
async function tabToButton(p: Page, text: string, max = 80) {
  for (let i = 0; i < max; i++) {
    await p.keyboard.press('Tab');
    const f = await focused(p);
    if (f.tag === 'BUTTON' && f.text === text) return;
  }
  throw new Error(`no button "${text}" reached by Tab`);
}

const DIGITS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];
const seedGroup = (name: string) => stack.directory.groups.find((g) => g.name === name)!.guid;

test("a user's page: the lockout time, the bad passwords and the DC that counted them, the groups", async () => {
  await page.goto(`/users/${seedUser('dave').guid}`);
  const facts = page.getByTestId('user-sign-in');
  await facts.waitFor();
  const text = (await facts.innerText()).replace(/\s+/g, ' ');
  // dave was locked out by real failed binds (local/directory/seed.mjs): a time, a count, a DC
  expect(text).toMatch(/Locked out since \S/);
  expect(text).toMatch(/Bad passwords \d+/);
  expect(text).toMatch(/Domain controller (?!—)\S+ \(the DC that answered/);
  await checkScreen(page, 'console-user');

  await page.goto(`/users/${seedUser('bob').guid}`);
  await page.getByTestId('user-groups').waitFor();
  expect(await page.getByTestId('user-groups').getByRole('listitem').allInnerTexts()).toContain('GG-Sales');
  expect((await page.getByTestId('user-sign-in').innerText()).replace(/\s+/g, ' ')).toMatch(/Locked out no/);
  await checkScreen(page, 'console-user-groups');
}, 120_000);

test('a reset with the keyboard alone: unlock too, the step-up, the read-out, Esc; focus back on the opener; the password kept nowhere', async () => {
  await page.goto(`/users/${seedUser('bob').guid}`);
  await page.getByRole('button', { name: 'Reset password' }).waitFor();
  await page.locator('main h1').click(); // start from the page, not the address bar
  await tabToButton(page, 'Reset password');
  await page.keyboard.press('Enter');
  const dialog = page.getByRole('dialog', { name: /^Reset password: / });
  await dialog.waitFor();
  // focus starts on the first field, then Tab walks the form
  expect(await focused(page)).toMatchObject({ tag: 'INPUT', type: 'checkbox' });
  await page.keyboard.press('Tab');
  expect(await focused(page)).toMatchObject({ tag: 'INPUT', name: 'unlock' });
  await page.keyboard.press('Space');
  expect(await dialog.getByRole('checkbox', { name: /Also unlock the account/ }).isChecked()).toBe(true);
  await page.keyboard.press('Tab');
  expect(await focused(page)).toMatchObject({ tag: 'INPUT', name: 'ticket' });
  await page.keyboard.type('INC-29');
  await page.keyboard.press('Enter'); // submits the form

  // the step-up, typed: focus is in its code field
  const stepUp = page.getByRole('dialog', { name: 'Confirm it is you' });
  const secret = dialog.getByTestId('secret');
  await Promise.race([stepUp.waitFor(), secret.waitFor()]);
  if (await stepUp.isVisible()) {
    expect(await focused(page)).toMatchObject({ tag: 'INPUT' });
    await page.keyboard.type(await nextCode('op-super'));
    await page.keyboard.press('Enter');
    await stepUp.waitFor({ state: 'detached' });
  }
  await secret.waitFor();
  const password = (await secret.textContent())!;
  expect(password.length).toBeGreaterThanOrEqual(12);

  // the read-out: every character said, letters with their case and NATO word, digits in words
  await tabToButton(page, 'Read out');
  await page.keyboard.press('Enter');
  const readout = dialog.getByTestId('readout').getByRole('listitem');
  await readout.first().waitFor();
  expect(await dialog.getByRole('button', { name: 'Read out' }).getAttribute('aria-pressed')).toBe('true');
  const said = await readout.allInnerTexts();
  expect(said).toHaveLength([...password].length);
  [...password].forEach((ch, i) => {
    if (/[a-z]/.test(ch)) expect(said[i]).toMatch(new RegExp(`^small ${ch} as in [A-Z][a-z-]+$`));
    else if (/[A-Z]/.test(ch)) expect(said[i]).toMatch(new RegExp(`^capital ${ch} as in [A-Z][a-z-]+$`));
    else if (/\d/.test(ch)) expect(said[i]).toBe(DIGITS[Number(ch)]);
    else expect(said[i]).toMatch(/^[a-z ]+$/); // a symbol by its name
  });
  expect(await browserState(w)).not.toContain(password);

  // Esc closes the dialog: focus is back on the button that opened it
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  expect(await focused(page)).toMatchObject({ tag: 'BUTTON', text: 'Reset password' });
  expect(await browserState(w)).not.toContain(password);
  expect(await page.content()).not.toContain(password);
}, 120_000);

test("a confirmation is the app's own dialog, answered by keyboard; focus returns to the control that asked", async () => {
  await page.goto('/admin/operators');
  await page.getByRole('button', { name: 'Delete op-branch' }).waitFor();
  await page.locator('main h1').click();
  let asked = false;
  page.once('dialog', () => (asked = true)); // the browser's own confirm() would show here
  for (let i = 0; i < 80; i++) {
    await page.keyboard.press('Tab');
    if ((await page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.textContent?.trim())) === 'Delete op-branch') break;
  }
  const opener = await page.evaluate(() => document.activeElement?.outerHTML);
  await page.keyboard.press('Enter');
  const confirm = page.getByRole('dialog', { name: 'Delete the record of op-branch?' });
  await confirm.waitFor();
  // a destructive confirmation starts on Cancel: Enter there does not delete
  expect(await focused(page)).toMatchObject({ tag: 'BUTTON', text: 'Cancel' });
  await page.keyboard.press('Enter');
  await confirm.waitFor({ state: 'detached' });
  expect(await page.evaluate(() => document.activeElement?.outerHTML)).toBe(opener);
  // asked again, then Esc: closed, nothing deleted, focus back again
  await page.keyboard.press('Enter');
  await confirm.waitFor();
  await page.keyboard.press('Escape');
  await confirm.waitFor({ state: 'detached' });
  expect(await page.evaluate(() => document.activeElement?.outerHTML)).toBe(opener);
  await page.getByRole('button', { name: 'Delete op-branch' }).waitFor();
  expect(asked).toBe(false);
}, 120_000);

test('the members picker by keyboard: search, a checkbox per candidate, what is picked in words; Esc gives focus back', async () => {
  const sales = seedGroup('GG-Sales');
  await page.goto(`/groups/${sales}`);
  await page.getByRole('button', { name: 'Add members' }).waitFor();
  await page.locator('main h1').click();
  await tabToButton(page, 'Add members');
  await page.keyboard.press('Enter');
  const dialog = page.getByRole('dialog', { name: 'Add members to GG-Sales' });
  await dialog.waitFor();
  await dialog.getByLabel('Search members to add').focus();
  await page.keyboard.type('alice');
  const alice = dialog.getByRole('list', { name: 'Candidates' }).getByRole('checkbox', { name: /Alice Anders/ });
  await alice.waitFor();
  await alice.focus();
  await page.keyboard.press('Space');
  await expect(dialog.getByTestId('picked-members').textContent()).resolves.toBe('To add: Alice Anders');
  await checkScreen(page, 'console-add-members');
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  expect(await focused(page)).toMatchObject({ tag: 'BUTTON', text: 'Add members' });
}, 120_000);
