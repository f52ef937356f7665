import * as OTPAuth from 'otpauth';
import type { Browser } from 'playwright-core';
import { resetAuthenticator } from '../../lib/auth/operators';
import { ConsoleClient } from '../../local/console-client';
import { account, nextCode, seedUser, store } from '../support/stack';
import { seriousViolations, launch, openContext, screenshot, WEB, type Watched } from './support';

// Sign-in as a person does it: an operator without an authenticator enrols inside the sign-in
// (QR code and key shown, first code), an operator without a role reads why, and a session that
// ends under a page asks to sign in again without losing what was typed.

let browser: Browser;
let w: Watched;
const enrol = account('op-enrol');

beforeAll(async () => {
  // op-enrol may have enrolled in the integration tests of this run: start from no authenticator
  await resetAuthenticator(store, seedUser('op-enrol').guid);
  browser = await launch();
  w = await openContext(browser, 'signin');
});
afterAll(async () => {
  await w?.context.close().catch(() => undefined);
  await browser?.close();
});

test('an operator with no console role reads why the sign-in is refused', async () => {
  const { page } = w;
  await page.goto('/');
  await page.getByLabel('User name').fill('op-norole');
  await page.getByLabel('Password').fill(account('op-norole').password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('alert').textContent()).resolves.toContain('has no role in this console');
});

test('enrolment inside the sign-in: QR code and key, then the first code signs in', async () => {
  const { page } = w;
  await page.getByLabel('User name').fill('op-enrol');
  await page.getByLabel('Password').fill(enrol.password);
  await page.getByLabel('Authenticator code').fill('');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Set up your authenticator' }).waitFor();
  const qr = page.getByRole('img', { name: 'QR code of your authenticator key' });
  expect(await qr.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0 && img.src.startsWith('data:image/svg+xml'))).toBe(true);
  const key = (await page.getByTestId('enrol-secret').textContent())!.replace(/\s+/g, '');
  expect(key).toMatch(/^[A-Z2-7]{32}$/);
  expect(await seriousViolations(page)).toEqual([]);
  await screenshot(page, 'enrolment');
  // the authenticator app: RFC 6238 from the key the page showed
  expect(new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(key) }).generate()).toMatch(/^\d{6}$/);
  await page.getByLabel('First code').fill(await nextCode('op-enrol', key));
  await page.getByRole('button', { name: 'Finish and sign in' }).click();
  await expect(page.getByTestId('operator').textContent()).resolves.toContain('op-enrol');
  (globalThis as { enrolKey?: string }).enrolKey = key;
});

test('a session that ends asks to sign in again over the page; what was typed stays', async () => {
  const { page, context } = w;
  await page.goto('/users');
  const search = page.getByLabel('Search users');
  await search.fill('ali');
  await page.locator('tbody tr').first().waitFor();
  // the session ends elsewhere (signed out from another tab, expired, revoked)
  const cookie = (await context.cookies(WEB)).find((c) => c.name === '__Host-hdc')!;
  const other = new ConsoleClient(WEB);
  other.setCookie('__Host-hdc', cookie.value);
  await other.antiforgery();
  expect((await other.post('/api/auth/logout', {}, { origin: WEB })).status).toBe(204);

  await search.fill('alice');
  const again = page.getByRole('dialog', { name: 'Sign in again' });
  await again.getByText('Your session ended').waitFor();
  await again.getByLabel('User name').fill('op-enrol');
  await again.getByLabel('Password').fill(enrol.password);
  await again.getByLabel('Authenticator code').fill(await nextCode('op-enrol', (globalThis as { enrolKey?: string }).enrolKey!));
  await again.getByRole('button', { name: 'Sign in' }).click();
  await again.waitFor({ state: 'detached' });
  expect(await search.inputValue()).toBe('alice');
  await page.getByRole('link', { name: /alice/i }).first().waitFor();
});

test('sign out ends the session and shows the sign-in', async () => {
  const { page } = w;
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  const r = await page.evaluate(() => fetch('/api/auth/me').then((x) => x.status));
  expect(r).toBe(401);
});
