import { consoleEnvironment, runAdminCommand } from '../../functions/admin/cli';
import { ConsoleClient } from '../../local/console-client';
import { createSession, loadSession, updateSession } from '../../lib/auth/sessions';
import { canonicalJson } from '../../lib/audit/canonical';
import { storedBody, type StoredRow } from '../../lib/audit/rows';
import { auditMark, auditSince, account, newClient, stack, store } from '../support/stack';

const env = { ...process.env, ...consoleEnvironment(stack) };

describe('the fleet status endpoint (bearer token)', () => {
  it('refuses a missing or wrong token, answers the status with the issued one', async () => {
    const mark = await auditMark();
    const issued = await runAdminCommand(['issue-fleet-token'], env);
    expect(issued.code).toBe(0);
    const token = /hdcf_\S+/.exec(issued.out)![0];
    expect((await auditSince(mark)).find((r) => r.event === 'settings.fleet_token')).toBeDefined();
    expect(JSON.stringify(await auditSince(mark))).not.toContain(token);

    const c = newClient();
    const none = await c.get('/api/fleet/v1/status');
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ code: 'invalid_token' });
    expect((await c.get('/api/fleet/v1/status', { authorization: 'Bearer hdcf_wrong' })).status).toBe(401);
    const ok = await c.get('/api/fleet/v1/status', { authorization: `Bearer ${token}` });
    expect(ok.status).toBe(200);
    expect(ok.body.instance.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(ok.body.health.status).toBe('healthy');
    expect(ok.body.audit.chain).toBe('ok');
    expect(ok.body.audit).toHaveProperty('lastFullVerificationAt');
    // the head the fleet keeps as its witness, and this console's hash at a sequence the fleet names
    expect(ok.body.audit.head).toEqual({ seq: expect.any(Number), hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const w = await c.get(`/api/fleet/v1/status?witnessSeq=${ok.body.audit.head.seq}`, { authorization: `Bearer ${token}` });
    expect(w.body.audit.witness).toEqual({ seq: ok.body.audit.head.seq, hash: ok.body.audit.head.hash });
    expect((await c.get('/api/fleet/v1/status?witnessSeq=999999999', { authorization: `Bearer ${token}` })).body.audit.witness).toEqual({ seq: 999999999, hash: null });
    // one more failed sign-in is counted
    const before = ok.body.audit.failedLogins24h as number;
    expect((await new ConsoleClient(stack.consoleUrl, '127.0.0.7').login('op-auditor', 'not-the-password')).status).toBe(401);
    expect((await c.get('/api/fleet/v1/status', { authorization: `Bearer ${token}` })).body.audit.failedLogins24h).toBe(before + 1);
    expect(ok.body.directory.dcs.map((d: any) => [d.name, d.state])).toEqual([['dc1', 'up'], ['dc2', 'up']]);

    // a new token replaces the old one
    const again = await runAdminCommand(['issue-fleet-token'], env);
    expect((await c.get('/api/fleet/v1/status', { authorization: `Bearer ${token}` })).status).toBe(401);
    expect((await c.get('/api/fleet/v1/status', { authorization: `Bearer ${/hdcf_\S+/.exec(again.out)![0]}` })).status).toBe(200);
  });
});

describe('tamper evidence in the fleet status (issue 8)', () => {
  const rowKey = (seq: number) => ({ pk: 'AUDIT#console', sk: String(seq).padStart(12, '0') });
  const poll = async (token: string) => (await newClient().get('/api/fleet/v1/status', { authorization: `Bearer ${token}` })).body.audit;

  it('reports broken at the next poll after an already verified old row’s details are edited in DynamoDB, ok again once restored', async () => {
    const token = /hdcf_\S+/.exec((await runAdminCommand(['issue-fleet-token'], env)).out)![0];
    expect((await poll(token)).chain).toBe('ok'); // this poll verifies every row so far
    const mark = await auditMark();
    const target = Math.max(2, Math.floor(mark / 3)); // an old row, well behind the checkpoint
    const original = (await store.get({ Key: rowKey(target) })).Item!;
    try {
      const body = storedBody(original as StoredRow);
      await store.put({ Item: { ...original, bodyText: canonicalJson({ ...body, details: { ...body.details, edited: true } }) } });
      // the guarantee (docs/decisions.md): at the next poll while the chain holds fewer rows than
      // one sample slice (2000), otherwise within ceil(N / 2000) polls
      const bound = Math.ceil(mark / 2000);
      let polls = 0;
      let audit: any;
      do audit = await poll(token);
      while (++polls < bound && audit.chain === 'ok');
      expect(audit).toMatchObject({ chain: 'broken', firstBadSeq: target, problem: 'hash_mismatch' });
      if (mark < 2000) expect(polls).toBe(1);
      expect((await poll(token)).chain).toBe('broken'); // and at every poll after
    } finally {
      await store.put({ Item: original });
    }
    expect((await poll(token)).chain).toBe('ok');
  });
});

describe('the admin CLI', () => {
  it('pin-password-service confirms the existing pin (first use is done by the local stack), audited', async () => {
    const mark = await auditMark();
    const r = await runAdminCommand(['pin-password-service'], env);
    expect(r).toEqual({ code: 0, out: `password service pinned to ${stack.directory.domain}` });
    expect((await auditSince(mark)).find((x) => x.event === 'settings.password_service_pin')).toMatchObject({ outcome: 'success' });
  });

  it('refuses setup-token on a configured instance and reset-setup without --confirm', async () => {
    expect((await runAdminCommand(['setup-token'], env)).code).toBe(2);
    expect((await runAdminCommand(['reset-setup'], env)).code).toBe(2);
  });

  it('reset-totp clears an authenticator (audited, reason recovery): the operator enrols again', async () => {
    // op-enrol: enrolled by the sign-in tests (or at least known to the console after one attempt)
    const a = account('op-enrol');
    await newClient().login(a.username, a.password);
    const mark = await auditMark();
    const r = await runAdminCommand(['reset-totp', 'op-enrol'], env);
    expect(r.code).toBe(0);
    expect((await auditSince(mark)).find((x) => x.event === 'operators.totp_reset')).toMatchObject({ outcome: 'success', reason: 'recovery', target: { name: 'op-enrol' } });
    const login = await newClient().login(a.username, a.password);
    expect(login.body.code).toBe('totp_enrolment_required');
    expect((await runAdminCommand(['reset-totp', 'nobody'], env)).code).toBe(1);
  });
});

describe('session expiry', () => {
  it('ends a session idle for longer than Session:IdleTimeout', async () => {
    const policy = { idleSeconds: 1800, absoluteSeconds: 36000 };
    const s = await createSession(store, policy, { guid: '00000000-0000-0000-0000-000000000001', dn: 'CN=x', username: 'x', sid: 'S-1-0', groupSids: [], provider: 'ad', factsAt: Date.now() });
    await updateSession(store, s, { lastSeenAt: Math.floor(Date.now() / 1000) - 1801 });
    const c = newClient();
    c.setCookie('__Host-hdc', s.id);
    expect((await c.get('/api/auth/me')).status).toBe(401);
    expect(await loadSession(store, s.id, policy)).toBeUndefined();
  });
});
