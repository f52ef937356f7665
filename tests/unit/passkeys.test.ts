import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../lib/config';
import { completeRegistration, registrationOptions, relyingParty } from '../../lib/auth/passkeys';
import { deleteAllPasskeys, listPasskeys } from '../../lib/auth/passkey-records';
import { ownStepUpOptions } from '../../lib/auth/own-passkeys';
import { requireRecentStepUp, requireStrictStepUp } from '../../lib/auth/stepup';
import { stepUp } from '../../lib/auth/reauth';
import type { Session } from '../../lib/auth/sessions';
import type { ConsoleRuntime } from '../../lib/runtime';
import type { StepUpMode } from '../../lib/setup/settings';
import { getRecord } from '../../lib/store/records';
import { resetOperatorAuthenticators } from '../../lib/admin/reset-totp';
import { getOperator, noteSignIn, setAuthenticator } from '../../lib/auth/operators';
import { memoryDynamoStore } from '../support/memory-store';
import { SoftAuthenticator } from '../support/passkey-authenticator';

// Passkeys (issue 32) on the memory store with a software authenticator: registration, step-up,
// the strict step-up bound to its action and target, and each refusal with its code and audit row.

const ORIGIN = 'https://console.example.test';
const GUID = '3f1d2c4b-0000-4000-8000-0000000000aa';
const key = randomBytes(32);

function runtime(mode: StepUpMode = 'authenticator') {
  const store = memoryDynamoStore();
  const rows: any[] = [];
  const { config } = loadConfig({ Hosting__PublicOrigin: ORIGIN, SignIn__MaxStepUpFailures: '20' });
  const rt = {
    store,
    config,
    settings: async () => ({ stepUpMode: mode }),
    masterKey: async () => key,
    audit: { append: async (r: unknown) => void rows.push(r), appendAll: async (r: unknown[]) => void rows.push(...r) },
  } as unknown as ConsoleRuntime;
  return { rt, rows, store };
}
const session = (extra: Partial<Session> = {}): Session =>
  ({ id: 'session-1', version: 1, csrfToken: 'c', createdAt: 0, lastSeenAt: 0, expiresAt: 9e9, operator: { guid: GUID, username: 'op-passkey', provider: 'ad', dn: 'CN=x' }, ...extra }) as unknown as Session;
const ctx = { sourceIp: '127.0.0.1', correlationId: 'corr' };

async function registered(rt: ConsoleRuntime, auth = new SoftAuthenticator(ORIGIN)) {
  const rp = relyingParty(ORIGIN);
  const s = session();
  const options = await registrationOptions(rt.store, rp, { guid: GUID, username: 'op-passkey' }, s.id, key);
  const summary = await completeRegistration(rt.store, rp, key, { guid: GUID }, s.id, auth.create(options) as never, 'laptop');
  return { auth, summary };
}

describe('passkeys: registration', () => {
  it('keeps the credential sealed (no public key or credential id in clear), UV and origin required, the challenge used once', async () => {
    const { rt, store } = runtime();
    const { auth, summary } = await registered(rt);
    expect(summary).toMatchObject({ name: 'laptop', ref: expect.any(String) });
    const rec = await getRecord<any>(store, `OPERATOR#${GUID}`, `PASSKEY#${summary.ref}`);
    const text = JSON.stringify(rec);
    expect(text).not.toContain(Buffer.from(auth.credentials[0].id).toString('base64url'));
    expect(rec!.data.sealed).toMatch(/^v1\./);
    expect(await listPasskeys(store, GUID)).toEqual([{ ref: summary.ref, name: 'laptop', createdAt: expect.any(String) }]);

    const rp = relyingParty(ORIGIN);
    const s = session();
    // user verification missing
    let options = await registrationOptions(store, rp, { guid: GUID, username: 'op-passkey' }, s.id, key);
    await expect(completeRegistration(store, rp, key, { guid: GUID }, s.id, auth.create(options, { uv: false }) as never, 'x')).rejects.toMatchObject({ status: 403, code: 'passkey_user_verification_required' });
    // another origin (a phishing page relaying the ceremony)
    options = await registrationOptions(store, rp, { guid: GUID, username: 'op-passkey' }, s.id, key);
    const phished = auth.create(options, { origin: 'https://console.example.test.evil.example' });
    await expect(completeRegistration(store, rp, key, { guid: GUID }, s.id, phished as never, 'x')).rejects.toMatchObject({ code: 'passkey_origin_mismatch' });
    // the same answer again: its challenge is used
    await expect(completeRegistration(store, rp, key, { guid: GUID }, s.id, phished as never, 'x')).rejects.toMatchObject({ code: 'passkey_challenge_invalid' });
    // a challenge of another session
    options = await registrationOptions(store, rp, { guid: GUID, username: 'op-passkey' }, s.id, key);
    await expect(completeRegistration(store, rp, key, { guid: GUID }, 'another-session', auth.create(options) as never, 'x')).rejects.toMatchObject({ code: 'passkey_challenge_invalid' });
    expect(await listPasskeys(store, GUID)).toHaveLength(1);
  });

  it('is refused without a public origin (503 passkeys_not_configured)', () => {
    expect(() => relyingParty(undefined)).toThrow(expect.objectContaining({ status: 503, code: 'passkeys_not_configured' }));
  });
});

describe('passkeys: step-up', () => {
  it('a passkey step-up is audited stepup:passkey with its action and target and opens the usual window', async () => {
    const { rt, rows } = runtime();
    const { auth } = await registered(rt);
    const s = session();
    const options = await ownStepUpOptions(rt, s, { action: 'POST /api/approvals/{id}/approve', target: 'r1' });
    await expect(stepUp(rt, s, { passkey: auth.get(options) as never }, ctx)).resolves.toBe('passkey');
    expect(rows.at(-1)).toMatchObject({ event: 'auth.reauth', outcome: 'success', reason: 'stepup:passkey', details: { action: 'POST /api/approvals/{id}/approve', target: 'r1' } });
  });

  it('refuses (403, audited with the code): a replayed assertion, another origin, UV missing, a counter going backwards, a removed passkey', async () => {
    const { rt, rows } = runtime();
    const { auth } = await registered(rt);
    const s = session();
    const bound = { action: 'POST /api/computers/{id}/laps', target: 'c1' };
    const ok = auth.get(await ownStepUpOptions(rt, s, bound));
    await stepUp(rt, s, { passkey: ok as never }, ctx);

    const refused = async (assertion: unknown, code: string) => {
      await expect(stepUp(rt, s, { passkey: assertion as never }, ctx)).rejects.toMatchObject({ status: 403, code });
      expect(rows.at(-1)).toMatchObject({ event: 'auth.reauth', outcome: 'failure', reason: 'stepup:passkey', details: { code } });
    };
    await refused(ok, 'passkey_challenge_invalid');
    await refused(auth.get(await ownStepUpOptions(rt, s, bound), { origin: 'https://evil.example' }), 'passkey_origin_mismatch');
    await refused(auth.get(await ownStepUpOptions(rt, s, bound), { uv: false }), 'passkey_user_verification_required');
    await refused(auth.get(await ownStepUpOptions(rt, s, bound), { counter: 1 }), 'passkey_counter_regressed');
    await refused(auth.get(await ownStepUpOptions(rt, s, bound), { rpId: 'evil.example' }), 'passkey_rp_mismatch');
    const beforeRemoval = await ownStepUpOptions(rt, s, bound);
    await deleteAllPasskeys(rt.store, GUID);
    await refused(auth.get(beforeRemoval), 'passkey_not_registered');
  });

  it('the strict step-up accepts an assertion made for this action and target only, once', async () => {
    const { rt } = runtime('passkey');
    const { auth } = await registered(rt);
    const s = session();
    const reveal = { action: 'POST /api/computers/{id}/laps', target: 'c1' };
    await stepUp(rt, s, { passkey: auth.get(await ownStepUpOptions(rt, s, reveal)) as never }, ctx);
    const current = { ...s, stepUpAt: Math.floor(Date.now() / 1000), stepUpProof: 'passkey', stepUpFor: 'POST /api/computers/{id}/laps c1' } as Session;
    // another computer: refused, naming the proof and what to make the assertion for
    await expect(requireStrictStepUp(rt, { ...current }, { action: reveal.action, target: 'c2' })).rejects.toMatchObject({
      code: 'strict_reauth_required',
      details: { proof: 'passkey', passkey: { action: reveal.action, target: 'c2' } },
    });
    await expect(requireStrictStepUp(rt, current, reveal)).resolves.toBeUndefined();
    // used: the same reveal again needs a new assertion
    await expect(requireStrictStepUp(rt, current, reveal)).rejects.toMatchObject({ code: 'strict_reauth_required' });
    // the usual step-ups take the passkey window
    await expect(requireRecentStepUp(rt, current)).resolves.toBeUndefined();
  });

  it('mode passkey: a code or the password is refused to an operator holding a passkey; an authenticator window is not enough', async () => {
    const { rt } = runtime('passkey');
    await registered(rt);
    await expect(stepUp(rt, session(), { code: '123456' }, ctx)).rejects.toMatchObject({ status: 400, code: 'passkey_required' });
    await expect(stepUp(rt, session(), { password: 'x' }, ctx)).rejects.toMatchObject({ status: 400, code: 'passkey_required' });
    const byCode = session({ stepUpAt: Math.floor(Date.now() / 1000), stepUpProof: 'authenticator' });
    await expect(requireRecentStepUp(rt, byCode)).rejects.toMatchObject({ code: 'reauth_required', details: { proof: 'passkey' } });
    await expect(requireStrictStepUp(rt, byCode, { action: 'a', target: 't' })).rejects.toMatchObject({ code: 'strict_reauth_required', details: { proof: 'passkey' } });
  });
});

describe('passkeys: the proof asked of an operator whose only authenticator is a passkey (mode authenticator)', () => {
  it('refuses the password (400 passkey_required) and a code (400 no_authenticator); the strict step-up names the passkey', async () => {
    const { rt } = runtime('authenticator');
    await registered(rt);
    await expect(stepUp(rt, session(), { password: 'x' }, ctx)).rejects.toMatchObject({ status: 400, code: 'passkey_required' });
    await expect(stepUp(rt, session(), { code: '123456' }, ctx)).rejects.toMatchObject({ status: 400, code: 'no_authenticator' });
    await expect(requireStrictStepUp(rt, session(), { action: 'POST /api/computers/{id}/laps', target: 'c9' })).rejects.toMatchObject({ code: 'strict_reauth_required', details: { proof: 'passkey', passkey: { target: 'c9' } } });
  });
});

describe('passkeys: recovery by the admin command line', () => {
  it('reset-authenticators removes every passkey and the authenticator, audited operators.authenticators_reset; then nothing is left to reset', async () => {
    const { rt, rows, store } = runtime();
    await noteSignIn(store, { guid: GUID, username: 'op-passkey', provider: 'ad', subject: GUID });
    await setAuthenticator(store, key, GUID, 'op-passkey', 'JBSWY3DPEHPK3PXP');
    await registered(rt);
    await registered(rt);
    expect(await listPasskeys(store, GUID)).toHaveLength(2);
    const actor = { name: 'root', provider: 'cli' };
    const r = await resetOperatorAuthenticators(rt, 'op-passkey', actor);
    expect(r.code).toBe(0);
    expect(r.out).toContain('2 passkey(s) removed and the authenticator cleared');
    expect(await listPasskeys(store, GUID)).toEqual([]);
    expect((await getOperator(store, GUID))!.data.totpSealed).toBeUndefined();
    expect(rows.at(-1)).toMatchObject({ event: 'operators.authenticators_reset', outcome: 'success', reason: 'recovery', target: { id: GUID }, details: { credentialsRemoved: 2, authenticatorCleared: true } });
    const again = await resetOperatorAuthenticators(rt, GUID, actor);
    expect(again.code).toBe(1);
    expect(rows.at(-1)).toMatchObject({ event: 'operators.authenticators_reset', outcome: 'denied', reason: 'no_authenticator' });
  });
});

describe('passkeys at sign-in (mode passkey)', () => {
  it('an operator without a passkey enrols one inside the sign-in; then the password plus a touch signs in, a code does not', async () => {
    const { signIn } = await import('../../lib/auth/signin');
    const { createSession } = await import('../../lib/auth/sessions');
    const { rt, rows, store } = runtime('passkey');
    const facts = { dn: 'CN=op,DC=x', guid: GUID, sid: 'S-1-5-21-1-2-3-1200', samAccountName: 'op-passkey', userAccountControl: 512, adminCount: 0, groupSids: [] };
    const dir = {
      baseDn: 'DC=x',
      findUserDn: async (login: string) => (login === 'op-passkey' ? facts.dn : undefined),
      principalFacts: async () => facts,
      readCreds: async () => ({ user: 'svc@x' }),
      verifyCredentials: async ({ password }: { password: string }) => password === 'right',
    };
    Object.assign(rt, {
      directory: async () => dir,
      settings: async () => ({ stepUpMode: 'passkey', superAdministrators: [GUID], protectedGroups: [], managedOus: [], tierOus: [] }),
    });
    const auth = new SoftAuthenticator(ORIGIN);
    const pre = await createSession(store, { idleSeconds: 900, absoluteSeconds: 3600 });
    const ctx = { sourceIp: '127.0.0.1', correlationId: 'c', preSession: pre };
    const input = { username: 'op-passkey', password: 'right' };

    const first = await signIn(rt, input, ctx).catch((e) => e);
    expect(first).toMatchObject({ status: 401, code: 'passkey_enrolment_required', details: { passkeyRegistrationOptions: { authenticatorSelection: { userVerification: 'required' } } } });
    const enrolled = await signIn(rt, { ...input, passkeyRegistration: auth.create(first.details.passkeyRegistrationOptions) as never }, ctx);
    expect(enrolled.operator.guid).toBe(GUID);
    expect(rows.find((r) => r.event === 'auth.passkey_registered')).toMatchObject({ outcome: 'success', details: { at: 'sign-in' } });
    expect(rows.filter((r) => r.event === 'auth.login').at(-1)).toMatchObject({ outcome: 'success', reason: 'password+passkey' });

    const pre2 = await createSession(store, { idleSeconds: 900, absoluteSeconds: 3600 });
    const ctx2 = { ...ctx, preSession: pre2 };
    const asked = await signIn(rt, input, ctx2).catch((e) => e);
    expect(asked).toMatchObject({ status: 401, code: 'passkey_required', details: { passkeyOptions: { userVerification: 'required' } } });
    await expect(signIn(rt, { ...input, code: '123456' }, ctx2)).rejects.toMatchObject({ status: 401, code: 'passkey_required' });
    const ok = await signIn(rt, { ...input, passkey: auth.get(asked.details.passkeyOptions) as never }, ctx2);
    expect(ok.operator.guid).toBe(GUID);
    // the touch opens the step-up window (an approver from a link: no second prompt)
    expect(ok.session).toMatchObject({ stepUpProof: 'passkey', stepUpAt: expect.any(Number) });
    // the wrong password never reaches the passkey
    await expect(signIn(rt, { username: 'op-passkey', password: 'wrong' }, ctx2)).rejects.toMatchObject({ status: 401, code: 'invalid_credentials' });
  });
});
