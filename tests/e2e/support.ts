import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'ldapts';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { loadConfig } from '../../lib/config';
import { lapsWindow } from '../../lib/password-service/service-side/service';
import { windowKey } from '../../lib/store/window';
import { RUN_DIR, ROOT } from '../../local/processes';
import { account, nextCode, seedUser, serviceStore, stack, store } from '../support/stack';
import { recordBrowserAnswers } from './contract';

// The web app in Debian's Chromium (playwright-core), against the stack `npm test` started: the
// app from local/web-server.ts (the CloudFront stand-in), the API behind it. Each context records
// a HAR and the page's console, searched for secrets by the tests.

export const WEB = stack.consoleWebUrl;
export const CHROMIUM = process.env.HDC_CHROMIUM ?? '/usr/bin/chromium';
export const ARTIFACTS = path.join(RUN_DIR, 'e2e');
export const SCREENSHOTS = path.join(ROOT, 'docs/screenshots');

export async function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

export interface Watched {
  context: BrowserContext;
  page: Page;
  /** every console message and page error of the context's pages */
  consoleLines: string[];
  harFile: string;
}

/**
 * A browser context on the web app with a HAR (URLs, headers, cookies, request bodies; response
 * bodies left out: the reveal's answer carries the password to the page by design) and the
 * console's output kept.
 */
export async function openContext(browser: Browser, name: string): Promise<Watched> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const harFile = path.join(ARTIFACTS, `${name}.har`);
  const context = await browser.newContext({
    baseURL: WEB,
    viewport: { width: 1280, height: 860 },
    recordHar: { path: harFile, content: 'omit' },
    permissions: ['clipboard-read', 'clipboard-write'],
  });
  const consoleLines: string[] = [];
  context.on('console', (m) => consoleLines.push(`${m.type()}: ${m.text()}`));
  context.on('weberror', (e) => consoleLines.push(`pageerror: ${e.error().message}`));
  recordBrowserAnswers(context, 'console', WEB);
  const page = await context.newPage();
  return { context, page, consoleLines, harFile };
}

/** Sign in through the form: password and a real authenticator code (RFC 6238, from the seeded key). */
export async function signInWithForm(page: Page, username: string) {
  const a = account(username);
  await page.getByLabel('User name').fill(username);
  await page.getByLabel('Password').fill(a.password);
  await page.getByLabel('Authenticator code').fill(await nextCode(username));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('operator').waitFor();
}

/** A page signed in through the form (each sign-in takes one of the operator's single-use codes). */
export async function signInAs(page: Page, username: string, at = '/') {
  await page.goto(at);
  await signInWithForm(page, username);
}

/** Answer the app's step-up prompt with the operator's next authenticator code. */
export async function stepUpInDialog(page: Page, username: string) {
  const dialog = page.getByRole('dialog', { name: 'Confirm it is you' });
  await dialog.getByLabel('Authenticator code').fill(await nextCode(username));
  await dialog.getByRole('button', { name: 'Confirm' }).click();
  await dialog.waitFor({ state: 'detached' });
}

const config = loadConfig({}).config;
/** Empty a computer's LAPS rate window (the integration tests read the seeded computers too). */
/** the LAPS rate window is the password service's: in its own store */
export const clearLapsWindow = (guid: string) => serviceStore.delete({ Key: windowKey(lapsWindow(config, guid)) });

/** Everything a page keeps: storages, cookies, caches, IndexedDB names, history and URL. */
export async function browserState(w: Watched): Promise<string> {
  const inPage = await w.page.evaluate(async () => {
    const dump = (s: Storage) => Object.fromEntries(Array.from({ length: s.length }, (_, i) => [s.key(i), s.getItem(s.key(i)!)]));
    const caches = 'caches' in self ? await self.caches.keys() : [];
    const dbs = indexedDB.databases ? await indexedDB.databases() : [];
    return { local: dump(localStorage), session: dump(sessionStorage), caches, dbs, url: location.href, historyState: history.state, historyLength: history.length, title: document.title };
  });
  const cookies = await w.context.cookies();
  const storage = await w.context.storageState();
  return JSON.stringify({ inPage, cookies, storage });
}

/** The HAR of a closed context, as text. */
export const harText = (w: Watched) => fs.readFileSync(w.harFile, 'utf8');

/**
 * axe-core run in the page (injected through the DevTools protocol: the app's CSP allows no inline
 * script): the serious and critical violations (issue 29: none is allowed on any screen or state).
 */
const AXE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
export async function seriousViolations(page: Page): Promise<Array<{ id: string; impact: string; nodes: string[] }>> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE);
  const r = await page.evaluate(async () => {
    const res = await (window as any).axe.run(document, { resultTypes: ['violations'] });
    return res.violations.map((v: any) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n: any) => n.target.join(' ')) }));
  });
  return r.filter((v: { impact: string }) => v.impact === 'critical' || v.impact === 'serious');
}

/** How far the page scrolls sideways (0 when nothing is wider than the viewport) and what sticks out. */
export async function sidewaysScroll(page: Page): Promise<{ overflow: number; widest: string[] }> {
  return page.evaluate(() => {
    const w = window.innerWidth;
    const overflow = document.scrollingElement!.scrollWidth - w;
    const name = (e: Element, right: number) => `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}${e.className && typeof e.className === 'string' ? `.${e.className.split(' ').join('.')}` : ''} (${Math.round(right)} px)`;
    const widest: string[] = [];
    if (overflow > 0) {
      for (const e of document.querySelectorAll('body *')) if (e.getBoundingClientRect().right > w + 1) widest.push(name(e, e.getBoundingClientRect().right));
      // text that sticks out of its box (a long word)
      const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const r = document.createRange();
        r.selectNodeContents(n);
        const right = r.getBoundingClientRect().right;
        if (right > w + 1) widest.push(`text "${(n.textContent ?? '').trim().slice(0, 40)}" in ${name(n.parentElement!, right)}`);
      }
    }
    return { overflow, widest: widest.slice(0, 6) };
  });
}

export const DESKTOP = { width: 1366, height: 768 };
export const PHONE = { width: 390, height: 844 };

/**
 * The screen as it is now, at the desktop width then at the phone width: nothing scrolls sideways,
 * no serious or critical axe violation, a screenshot of each (<name>-1366, <name>-390). Leaves the
 * page at the width it found.
 */
export async function checkScreen(page: Page, name: string) {
  const start = page.viewportSize();
  const failures: string[] = [];
  for (const size of [DESKTOP, PHONE]) {
    await page.setViewportSize(size);
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const s = await sidewaysScroll(page);
    if (s.overflow > 0) failures.push(`${name} at ${size.width} px scrolls sideways by ${s.overflow} px: ${s.widest.join(', ')}`);
    const v = await seriousViolations(page);
    if (v.length) failures.push(`${name} at ${size.width} px: axe ${JSON.stringify(v)}`);
    if (!(await page.evaluate(() => !!document.querySelector('dialog[open]')))) await page.evaluate(() => scrollTo(0, 0)); // the screen from its top
    await screenshot(page, `${name}-${size.width}`);
  }
  if (start) await page.setViewportSize(start);
  expect(failures).toEqual([]);
}

/** Press Tab until the element has focus: every control must be reachable by keyboard. */
export async function reachByTab(page: Page, selector: string, max = 60): Promise<boolean> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate((s) => document.activeElement === document.querySelector(s), selector)) return true;
  }
  return false;
}

/** Every run takes the screenshots (so a broken screen still fails here); only HDC_SCREENSHOTS=1
 *  writes them over the committed docs/screenshots, so a plain `npm test` leaves the tree clean. */
export async function screenshot(page: Page, name: string) {
  const folder = process.env.HDC_SCREENSHOTS === '1' ? SCREENSHOTS : path.join(RUN_DIR, 'screenshots');
  fs.mkdirSync(folder, { recursive: true });
  await page.screenshot({ path: path.join(folder, `${name}.png`) });
}

export const computer = (name: string) => {
  const c = stack.directory.computers.find((x) => x.name === name) as (typeof stack.directory.computers)[number] & { lapsPassword?: string };
  if (!c) throw new Error(`no seeded computer ${name}`);
  return c;
};

/** A call on dc1 as the domain's administrator (or `as`), over LDAPS. */
async function ldap<T>(fn: (c: Client) => Promise<T>, as = { dn: stack.directory.admin.upn, password: stack.directory.admin.password }): Promise<T> {
  const c = new Client({ url: stack.directory.dcs[0].url, tlsOptions: { ca: [fs.readFileSync(stack.directory.caFile)] } });
  try {
    await c.bind(as.dn, as.password);
    return await fn(c);
  } finally {
    await c.unbind().catch(() => undefined);
  }
}
/** Whether dave (the seeded locked-out user) is locked out now. */
export const isDaveLocked = () => {
  const dave = seedUser('dave');
  return ldap(async (c) => (Number((await c.search(dave.dn, { scope: 'base', attributes: ['msDS-User-Account-Control-Computed'] })).searchEntries[0]['msDS-User-Account-Control-Computed']) & 0x10) !== 0);
};
/**
 * dave locked out again (a test that unlocks him puts him back: the other files find him locked).
 * He has a lockout threshold of 3 (a password settings object for him alone): three failed binds lock him.
 */
export async function lockDave() {
  const dave = seedUser('dave');
  for (let i = 0; i < 3 && !(await isDaveLocked()); i++) await ldap(async () => undefined, { dn: dave.dn, password: 'wrong-password' }).catch(() => undefined);
}
