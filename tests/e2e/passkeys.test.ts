import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { consoleEnvironment } from '../../functions/admin/cli';
import { consoleRoutes } from '../../functions/console/all-routes';
import { staticApp } from '../../lib/gateway/static-files';
import { securityHeaders } from '../../lib/http/browser';
import { createHttpHandler } from '../../lib/http/console';
import { createRuntime } from '../../lib/runtime';
import { windowKey } from '../../lib/store/window';
import { consoleAccessConfig } from '../../local/access-platform';
import { WEB_DIST } from '../../local/web';
import { httpEvent } from '../support/http-event';
import { account, auditMark, auditSince, nextCode, profile, seedUser, signedIn, stack, steppedUp, store } from '../support/stack';
import { clearLapsWindow, computer, launch, lockDave, stepUpInDialog } from './support';

// Passkeys in Chromium (issue 32) with the DevTools protocol's virtual authenticator (ctap2,
// resident keys, user verification): register from My security, sign in with the password and a
// touch, a LAPS reveal's strict step-up by passkey, and the approver's path from the link
// (signed in: at most 2 clicks, no code). Browsers refuse an IP address as a passkey's relying
// party, and the shared stack's web origin is http://127.0.0.1:<port>: this file serves the
// built app and the console's handlers itself on http://localhost:<port> (Hosting:PublicOrigin
// that origin), on the stack's store, directory and password service (docs/decisions.md, issue 32).

let server: http.Server;
let origin: string;
let browser: Browser;
const contexts: BrowserContext[] = [];
let approvalSettings: Record<string, unknown>;
// the pages whose virtual authenticators hold the helpdesk operator's and the approver's passkeys
let helpdeskPage: Page;
let approverPage: Page;
// single-use codes: a sign-in by code may wait for the next 30 s step
jest.setTimeout(300_000);
const approved = async (mark: number) => {
  for (let i = 0; i < 100 && !(await auditSince(mark)).some((r) => r.event === 'request.approved' && r.outcome === 'success'); i++) await new Promise((r) => setTimeout(r, 100));
  return (await auditSince(mark)).some((r) => r.event === 'request.approved' && r.outcome === 'success');
};

async function serveConsole(): Promise<void> {
  server = http.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  origin = `http://localhost:${(server.address() as AddressInfo).port}`;
  // the console side reaches the password service through its process environment
  process.env.HDC_LAMBDA_ENDPOINT = stack.passwordServiceEndpoint;
  process.env.HDC_PASSWORD_SERVICE_FUNCTION = stack.passwordServiceFunction;
  process.env.HDC_LINK_KEY_FILE = stack.linkKeyFile;
  const env = {
    ...process.env,
    ...consoleEnvironment(stack),
    ...consoleAccessConfig(profile),
    NODE_EXTRA_CA_CERTS: stack.directory.caFile,
    HDC_ENVIRONMENT: 'Development',
    Helpdesk__Enabled: 'true',
    Helpdesk__LapsIdentityUpn: stack.directory.technicalAccounts.laps.upn,
    Hosting__PublicOrigin: origin,
  };
  const rt = createRuntime({ env, store });
  const handler = createHttpHandler(Object.values(consoleRoutes).flat() as never[], () => rt);
  const files = staticApp(WEB_DIST, securityHeaders({ publicOrigin: origin, hstsMaxAge: 0 }));
  server.on('request', async (req, res) => {
    if (!/^\/(api|health)(\/|$)/.test(req.url ?? '')) return files(req, res);
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const [p, q] = (req.url ?? '/').split('?');
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]));
    const event = httpEvent(req.method!, p, { headers, body: chunks.length ? Buffer.concat(chunks).toString('utf8') : undefined, query: q ? Object.fromEntries(new URLSearchParams(q)) : undefined, sourceIp: '127.0.0.1' });
    Object.assign(event, { rawQueryString: q ?? '', cookies: req.headers.cookie?.split(';').map((s) => s.trim()) });
    const r = (await handler(event)) as { statusCode?: number; headers?: Record<string, string>; cookies?: string[]; body?: string; isBase64Encoded?: boolean };
    res.writeHead(r.statusCode ?? 200, { ...(r.headers ?? {}), ...(r.cookies?.length ? { 'set-cookie': r.cookies } : {}) });
    res.end(r.isBase64Encoded ? Buffer.from(r.body ?? '', 'base64') : (r.body ?? ''));
  });
}

/** A browser context on the console with a virtual authenticator (ctap2, resident keys, UV). */
async function withAuthenticator(name: string): Promise<{ page: Page; cdp: CDPSession; authenticatorId: string }> {
  const context = await browser.newContext({ baseURL: origin, viewport: { width: 1280, height: 860 } });
  contexts.push(context);
  const page = await context.newPage();
  page.on('pageerror', (e) => console.log(`${name} pageerror: ${e.message}`));
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  return { page, cdp, authenticatorId };
}

async function passwordAndCode(page: Page, username: string) {
  await page.goto('/');
  await page.getByLabel('User name').fill(username);
  await page.getByLabel('Password').fill(account(username).password);
  await page.getByLabel('Authenticator code').fill(await nextCode(username));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('operator').waitFor();
}

/** My security → Add a passkey: the step-up by code first, then the authenticator makes the key. */
async function registerInApp(page: Page, username: string, name: string) {
  await page.getByRole('link', { name: 'My security' }).click();
  await page.getByRole('heading', { name: 'My security' }).waitFor();
  await page.getByLabel('Name of the passkey').fill(name);
  await page.getByRole('button', { name: 'Add a passkey' }).click();
  await stepUpInDialog(page, username);
  await page.getByText(`Passkey “${name}” added.`).waitFor();
}

/** The password, then one touch instead of the code. */
async function passwordAndPasskey(page: Page, username: string) {
  await page.goto('/');
  await page.getByLabel('User name').fill(username);
  await page.getByLabel('Password').fill(account(username).password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Use your passkey' }).click();
  await page.getByTestId('operator').waitFor();
}

async function removeAllPasskeys(username: string) {
  const c = await signedIn(username);
  const list = await c.get('/api/auth/passkeys');
  if (!list.body?.items?.length) return;
  await c.post('/api/auth/reauth', { code: await nextCode(username) });
  for (const p of list.body.items) await c.delete(`/api/auth/passkeys/${p.ref}`);
}

beforeAll(async () => {
  await serveConsole();
  browser = await launch();
  const superC = await steppedUp('op-super');
  approvalSettings = (await superC.get('/api/admin/approvals/settings')).body.settings;
});
afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => undefined);
  await browser?.close();
  server?.close();
  const superC = await steppedUp('op-super');
  const now = (await superC.get('/api/admin/approvals/settings')).body.version;
  await superC.put('/api/admin/approvals/settings', { ...approvalSettings, version: now });
  await lockDave(); // the approvals here unlocked him: the other files find him locked out
  for (const u of ['op-helpdesk', 'op-approver', 'op-branch']) {
    await removeAllPasskeys(u).catch(() => undefined);
    await store.delete({ Key: windowKey({ scope: 'stepup-account', subject: `guid:${seedUser(u).guid.toLowerCase()}` }) });
  }
});

test('an operator registers a passkey from My security, then signs in with the password and one touch (no code)', async () => {
  const { page, cdp, authenticatorId } = await withAuthenticator('register');
  helpdeskPage = page;
  await passwordAndCode(page, 'op-helpdesk');
  let mark = await auditMark();
  await registerInApp(page, 'op-helpdesk', 'e2e laptop');
  // the message comes as the list is asked again: the list shows the key once its answer is in
  await page.getByTestId('passkeys').getByRole('row', { name: /e2e laptop/ }).waitFor();
  expect(await page.getByTestId('passkeys').getByRole('row').count()).toBe(2); // header + the passkey
  const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
  expect(credentials).toHaveLength(1);
  expect(credentials[0].isResidentCredential).toBe(true);
  expect((await auditSince(mark)).find((r) => r.event === 'auth.passkey_registered')).toMatchObject({ outcome: 'success', details: { name: 'e2e laptop' } });

  await page.getByRole('button', { name: 'Sign out' }).click();
  mark = await auditMark();
  await passwordAndPasskey(page, 'op-helpdesk');
  expect((await auditSince(mark)).find((r) => r.event === 'auth.login' && r.outcome === 'success')).toMatchObject({ reason: 'password+passkey' });
});

test('a LAPS reveal asks for the strict step-up; one touch made for that computer reveals it (stepup:passkey)', async () => {
  // signed in with the password and a touch (the first test): the window that touch opened serves
  // the usual step-ups, not a reveal, which asks an assertion made for that computer
  const page = helpdeskPage;
  const pc = computer('WS-STD-02');
  await clearLapsWindow(pc.guid);
  await page.goto(`/computers/${pc.guid}`);
  await page.getByRole('button', { name: 'Reveal local administrator password' }).click();
  const dialog = page.getByRole('dialog', { name: /Local administrator password of WS-STD-02/ });
  await dialog.getByLabel('Ticket', { exact: true }).fill('INC-E2E-32');
  await dialog.getByLabel(/I need this password/).check();
  const mark = await auditMark();
  await dialog.getByRole('button', { name: 'Reveal' }).click();
  const confirm = page.getByRole('dialog', { name: 'Confirm it is you' });
  await confirm.getByRole('button', { name: 'Use a passkey' }).click();
  await confirm.waitFor({ state: 'detached' });
  await expect(dialog.getByTestId('secret').textContent()).resolves.toBe((pc as { lapsLegacyPassword?: string; lapsPassword?: string }).lapsLegacyPassword ?? (pc as { lapsPassword?: string }).lapsPassword);
  const rows = await auditSince(mark);
  expect(rows.find((r) => r.event === 'auth.reauth')).toMatchObject({ outcome: 'success', reason: 'stepup:passkey', details: { action: 'POST /api/computers/{id}/laps', target: pc.guid } });
  await clearLapsWindow(pc.guid);
});

test('a signed-in approver approves from the notification link with one passkey touch: 2 clicks, no code', async () => {
  const superC = await steppedUp('op-super');
  const version = (await superC.get('/api/admin/approvals/settings')).body.version;
  const approver = seedUser('op-approver').guid;
  const put = await superC.put('/api/admin/approvals/settings', {
    ...approvalSettings,
    version,
    delegations: { ...(approvalSettings.delegations as object), 'helpdesk-managed': { requiresApproval: ['users.unlock'], approvers: { roles: [], operators: [approver] }, approvalsNeeded: 1 } },
  });
  expect(put.status).toBe(200);
  const helpdesk = await signedIn('op-helpdesk');
  const filed = await helpdesk.post('/api/approvals', { kind: 'action', action: 'users.unlock', target: seedUser('dave').guid, parameters: {}, reason: 'e2e passkey approval' });
  expect(filed.status).toBe(201);

  const { page } = await withAuthenticator('approver');
  approverPage = page;
  await passwordAndCode(page, 'op-approver');
  await registerInApp(page, 'op-approver', 'e2e approver key');
  // signed in with the password and a code: no step-up window now (the code's window is spent)
  await page.getByRole('button', { name: 'Sign out' }).click();
  await passwordAndCode(page, 'op-approver');

  // from the link: every click the approver makes is counted
  await page.goto(`/approvals/${filed.body.id}`);
  await page.getByRole('button', { name: 'Approve' }).waitFor();
  await page.evaluate(() => {
    (window as unknown as { clicks: number }).clicks = 0;
    document.addEventListener('click', () => (window as unknown as { clicks: number }).clicks++, true);
  });
  const mark = await auditMark();
  await page.getByRole('button', { name: 'Approve' }).click();
  await page.getByRole('dialog', { name: 'Confirm it is you' }).getByRole('button', { name: 'Use a passkey' }).click();
  await page.getByRole('dialog', { name: 'Confirm it is you' }).waitFor({ state: 'detached' });
  expect(await approved(mark)).toBe(true);
  expect(await page.evaluate(() => (window as unknown as { clicks: number }).clicks)).toBeLessThanOrEqual(2);
  expect((await auditSince(mark)).find((r) => r.event === 'auth.reauth')).toMatchObject({ outcome: 'success', reason: 'stepup:passkey' });
  // no code typed for the approval
  expect((await auditSince(mark)).some((r) => r.event === 'auth.reauth' && r.reason === 'authenticator')).toBe(false);
});

test('a signed-out approver opens the link, signs in with the password and one touch, and approves with no other prompt', async () => {
  const helpdesk = await signedIn('op-helpdesk');
  const filed = await helpdesk.post('/api/approvals', { kind: 'action', action: 'users.unlock', target: seedUser('dave').guid, parameters: {}, reason: 'e2e passkey approval, signed out' });
  expect(filed.status).toBe(201);
  const page = approverPage;
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.goto(`/approvals/${filed.body.id}`);
  await page.getByText('Sign in to review the request you were sent.').waitFor();
  const mark = await auditMark();
  await page.getByLabel('User name').fill('op-approver');
  await page.getByLabel('Password').fill(account('op-approver').password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Use your passkey' }).click();
  await page.getByRole('button', { name: 'Approve' }).click();
  expect(await approved(mark)).toBe(true);
  expect(await page.getByRole('dialog', { name: 'Confirm it is you' }).count()).toBe(0);
  expect((await auditSince(mark)).find((r) => r.event === 'auth.login' && r.outcome === 'success')).toMatchObject({ reason: 'password+passkey' });
  expect((await auditSince(mark)).some((r) => r.event === 'auth.reauth')).toBe(false); // the sign-in's touch was the step-up
});

test('a passkey alone signs in once allowed; removed in My security, it is refused with its code and audited', async () => {
  const superC = await steppedUp('op-super');
  expect((await superC.put('/api/settings/passkey-sign-in', { allowed: true })).status).toBe(200);
  try {
    const page = helpdeskPage;
    await page.goto('/'); // the reveal's dialog of an earlier test closes
    await page.getByTestId('operator').waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    let mark = await auditMark();
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.getByTestId('operator').waitFor();
    expect((await auditSince(mark)).find((r) => r.event === 'auth.login')).toMatchObject({ outcome: 'success', reason: 'passkey' });

    // the touch opened the step-up window: the removal needs no other prompt
    await page.getByRole('link', { name: 'My security' }).click();
    mark = await auditMark();
    await page.getByRole('button', { name: 'Remove', exact: true }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Remove the passkey' }).click();
    await page.getByText(/Passkey “.*” removed\./).waitFor();
    expect((await auditSince(mark)).find((r) => r.event === 'auth.passkey_removed')).toMatchObject({ outcome: 'success' });

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.goto('/');
    mark = await auditMark();
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.getByText('That passkey is not registered to you (or was removed).').waitFor();
    expect((await auditSince(mark)).find((r) => r.event === 'auth.login')).toMatchObject({ outcome: 'failure', reason: 'passkey_not_registered' });
  } finally {
    const c = await steppedUp('op-super');
    await c.put('/api/settings/passkey-sign-in', { allowed: false });
  }
});

/** The options of a step-up assertion for `purpose`, asked in this page's session, and its CSRF token. */
const stepUpOptionsInPage = (page: Page, purpose: { action: string; target?: string }) =>
  page.evaluate(async (purpose) => {
    const csrf = ((await (await fetch('/api/auth/antiforgery', { cache: 'no-store' })).json()) as { token: string }).token;
    const options = await (await fetch('/api/auth/passkeys/step-up-options', { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json', 'x-csrf-token': csrf }, body: JSON.stringify(purpose) })).json();
    return { options, csrf };
  }, purpose);

/** This page's authenticator answers `options` (navigator.credentials.get), in WebAuthn's JSON form; or the browser's refusal. */
const assertOn = (page: Page, options: unknown): Promise<{ passkey: unknown } | { error: string }> =>
  page.evaluate(async (o: any) => {
    const bytes = (s: string) => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(s.length / 4) * 4, '=')), (c) => c.charCodeAt(0));
    const text = (b: ArrayBuffer) => btoa(String.fromCharCode(...new Uint8Array(b))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
    try {
      const cred = (await navigator.credentials.get({
        publicKey: { challenge: bytes(o.challenge), rpId: o.rpId, allowCredentials: (o.allowCredentials ?? []).map((c: { id: string }) => ({ type: 'public-key', id: bytes(c.id) })), userVerification: o.userVerification, timeout: 10_000 },
      })) as PublicKeyCredential;
      const r = cred.response as AuthenticatorAssertionResponse;
      return { passkey: { id: cred.id, rawId: text(cred.rawId), type: 'public-key', clientExtensionResults: {}, response: { clientDataJSON: text(r.clientDataJSON), authenticatorData: text(r.authenticatorData), signature: text(r.signature), ...(r.userHandle ? { userHandle: text(r.userHandle) } : {}) } } };
    } catch (e) {
      return { error: (e as Error).name };
    }
  }, options);

/**
 * One step-up assertion made by this page's authenticator as the app makes it (options from the
 * console for `purpose`, then the authenticator), with the session's CSRF token: what a test then
 * sends to POST /api/auth/reauth, once or again.
 */
async function assertionInPage(page: Page, purpose: { action: string; target?: string }): Promise<{ passkey: unknown; csrf: string } | { error: string }> {
  const { options, csrf } = await stepUpOptionsInPage(page, purpose);
  const answer = await assertOn(page, options);
  return 'passkey' in answer ? { passkey: answer.passkey, csrf } : answer;
}
const reauthInPage = (page: Page, body: { passkey: unknown; csrf: string }) =>
  page.evaluate(async ({ passkey, csrf }) => {
    const r = await fetch('/api/auth/reauth', { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json', 'x-csrf-token': csrf }, body: JSON.stringify({ passkey }) });
    return { status: r.status, body: await r.json().catch(() => ({})) };
  }, body);

test('in Chromium, what the console refuses: a replayed assertion, a counter gone back, an assertion made on another origin (relayed by a phishing page), a removed passkey; user verification missing is refused by the browser itself', async () => {
  const { page, cdp, authenticatorId } = await withAuthenticator('refusals');
  await passwordAndCode(page, 'op-branch');
  await registerInApp(page, 'op-branch', 'e2e refusals key');

  // a replayed assertion: the first one steps up, the very same one again is refused, audited
  const first = await assertionInPage(page, { action: 'step-up' });
  if (!('passkey' in first)) throw new Error(`no assertion: ${first.error}`);
  let mark = await auditMark();
  expect(await reauthInPage(page, first)).toMatchObject({ status: 200 });
  const replay = await reauthInPage(page, first);
  expect([replay.status, replay.body.code]).toEqual([403, 'passkey_challenge_invalid']);
  let rows = (await auditSince(mark)).filter((r) => r.event === 'auth.reauth');
  expect(rows.map((r) => [r.outcome, r.reason, r.details?.code])).toEqual([
    ['success', 'stepup:passkey', undefined],
    ['failure', 'stepup:passkey', 'passkey_challenge_invalid'],
  ]);

  // the counter gone back: the same key put back with an older count (a cloned authenticator)
  const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
  expect(credentials).toHaveLength(1);
  expect(credentials[0].signCount).toBeGreaterThan(1);
  await cdp.send('WebAuthn.removeCredential', { authenticatorId, credentialId: credentials[0].credentialId });
  await cdp.send('WebAuthn.addCredential', { authenticatorId, credential: { ...credentials[0], signCount: 0 } });
  const cloned = await assertionInPage(page, { action: 'step-up' });
  if (!('passkey' in cloned)) throw new Error(`no assertion: ${cloned.error}`);
  mark = await auditMark();
  const back = await reauthInPage(page, cloned);
  expect([back.status, back.body.code]).toEqual([403, 'passkey_counter_regressed']);
  rows = (await auditSince(mark)).filter((r) => r.event === 'auth.reauth');
  expect(rows.map((r) => [r.outcome, r.details?.code])).toEqual([['failure', 'passkey_counter_regressed']]);

  // another origin (http://localhost:<other port>: the same rpId, so the browser signs) relays the
  // console's challenge: the authenticator holding the same key answers there, and the console,
  // given that answer in the operator's session, refuses the origin the browser wrote into it
  const elsewhere = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>elsewhere</title>'));
  await new Promise<void>((r) => elsewhere.listen(0, '127.0.0.1', () => r()));
  try {
    const phishing = await page.context().newPage();
    await phishing.goto(`http://localhost:${(elsewhere.address() as AddressInfo).port}/`);
    const cdp2 = await page.context().newCDPSession(phishing);
    await cdp2.send('WebAuthn.enable');
    const { authenticatorId: other } = await cdp2.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    const { credentials: now } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    await cdp2.send('WebAuthn.addCredential', { authenticatorId: other, credential: { ...now[0], signCount: now[0].signCount + 10 } });
    const { options, csrf } = await stepUpOptionsInPage(page, { action: 'step-up' });
    const relayed = await assertOn(phishing, options);
    if (!('passkey' in relayed)) throw new Error(`no assertion: ${relayed.error}`);
    mark = await auditMark();
    const wrong = await reauthInPage(page, { passkey: relayed.passkey, csrf });
    expect([wrong.status, wrong.body.code]).toEqual([403, 'passkey_origin_mismatch']);
    rows = (await auditSince(mark)).filter((r) => r.event === 'auth.reauth');
    expect(rows.map((r) => [r.outcome, r.details?.code])).toEqual([['failure', 'passkey_origin_mismatch']]);
    await phishing.close();
  } finally {
    elsewhere.close();
  }

  // user verification missing: the authenticator does not verify the user; the console asks for
  // it (userVerification required), so the browser refuses before anything reaches the console
  await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: false });
  mark = await auditMark();
  const unverified = await assertionInPage(page, { action: 'step-up' });
  expect(unverified).toEqual({ error: 'NotAllowedError' });
  expect((await auditSince(mark)).filter((r) => r.event === 'auth.reauth')).toEqual([]);
  await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: true });

  // a passkey removed on the console: the authenticator still answers, the console refuses it
  await cdp.send('WebAuthn.removeCredential', { authenticatorId, credentialId: credentials[0].credentialId });
  await cdp.send('WebAuthn.addCredential', { authenticatorId, credential: { ...credentials[0], signCount: 1000 } });
  const before = await assertionInPage(page, { action: 'step-up' });
  if (!('passkey' in before)) throw new Error(`no assertion: ${before.error}`);
  await removeAllPasskeys('op-branch');
  mark = await auditMark();
  const removed = await reauthInPage(page, before);
  expect([removed.status, removed.body.code]).toEqual([403, 'passkey_not_registered']);
  rows = (await auditSince(mark)).filter((r) => r.event === 'auth.reauth');
  expect(rows.map((r) => [r.outcome, r.details?.code])).toEqual([['failure', 'passkey_not_registered']]);
});
