import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { mintToken } from '../../local/fleet/issuer';
import { stack as fleet } from '../integration/fleet/support';
import { recordBrowserAnswers } from './contract';
import { ARTIFACTS, type Watched } from './support';

// The fleet dashboard (web/fleet) in Debian's Chromium, against the fleet stack `npm test` started:
// the dashboard from local/web-server.ts, the fleet API behind it on the same origin. A context
// records a HAR with the response bodies, so a test can search everything the page received.

export { fleet };
export const FLEET_WEB = fleet.fleetWebUrl;

export interface FleetContextOptions {
  /** the access platform's JWT: added to every request like the platform's proxy does (Teleport-Jwt-Assertion) */
  assertion?: string;
  viewport?: { width: number; height: number };
}

export async function openFleetContext(browser: Browser, name: string, opts: FleetContextOptions = {}): Promise<Watched> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const harFile = path.join(ARTIFACTS, `${name}.har`);
  const context = await browser.newContext({
    baseURL: FLEET_WEB,
    viewport: opts.viewport ?? { width: 1280, height: 860 },
    recordHar: { path: harFile, content: 'embed' },
    acceptDownloads: true,
    ...(opts.assertion ? { extraHTTPHeaders: { 'teleport-jwt-assertion': opts.assertion } } : {}),
  });
  const consoleLines: string[] = [];
  context.on('console', (m) => consoleLines.push(`${m.type()}: ${m.text()}`));
  context.on('weberror', (e) => consoleLines.push(`pageerror: ${e.error().message}`));
  recordBrowserAnswers(context, 'fleet', FLEET_WEB);
  // a screen answers in well under a second here: fail fast instead of 30 s per step
  context.setDefaultTimeout(15_000);
  const page = await context.newPage();
  return { context, page, consoleLines, harFile };
}

/** A technician or administrator arriving through the access platform (its JWT on every request). */
export async function platformContext(browser: Browser, name: string, username: string, roles: string[]): Promise<Watched> {
  return openFleetContext(browser, name, { assertion: await mintToken(username, roles) });
}

/** The local administrator through the sign-in form. */
export async function signInLocal(page: Page, at = '/proxies') {
  await page.goto(at);
  await page.getByLabel('User name').fill(fleet.fleetAdmin.username);
  await page.getByLabel('Password').fill(fleet.fleetAdmin.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('who').waitFor();
}

/** Wait until the proxies screen shows the answer of the current URL's query. */
export async function proxiesShown(page: Page) {
  await page.getByTestId('list-status').waitFor();
  await page.waitForFunction(() => !document.querySelector('[data-testid="list-status"]')?.textContent?.includes('refreshing'));
}

/** Host names in the proxies table, in order. */
export const hostsShown = (page: Page) => page.locator('[data-testid="proxies-table"] tbody tr[data-testid^="proxy-"] td:first-child').allTextContents();
