import fs from 'node:fs';
import { Client } from 'ldapts';
import type { ConsoleClient } from '../../local/console-client';
import { auditMark, auditSince, lapsCanaries, serviceStore, signedIn, stack, steppedUp, store } from '../support/stack';

// The LAPS reveal and expire chain against the Samba directory, through the real console, the
// real password service (Lambda invoke over the signed link) and the LAPS account's own rights.
const computer = (name: string) => {
  const c = stack.directory.computers.find((x) => x.name === name) as (typeof stack.directory.computers)[number] & { lapsPassword?: string; lapsLegacyPassword?: string };
  if (!c) throw new Error(`no seeded computer ${name}`);
  return c;
};
const LAPS_CANARIES = lapsCanaries();
const errorBodies: string[] = [];

async function reveal(c: ConsoleClient, name: string, body: Record<string, unknown> = { confirm: true, ticket: 'INC-4242' }) {
  const r = await c.post(`/api/computers/${computer(name).guid}/laps`, body);
  if (r.status !== 200) errorBodies.push(r.text);
  return r;
}
async function expireLaps(c: ConsoleClient, name: string) {
  const r = await c.post(`/api/computers/${computer(name).guid}/laps/expire`, { confirm: true, ticket: 'INC-4243' });
  if (r.status !== 200) errorBodies.push(r.text);
  return r;
}
async function adminLdap(url: string) {
  const l = new Client({ url, tlsOptions: { ca: [fs.readFileSync(stack.directory.caFile)] } });
  await l.bind(stack.directory.admin.upn, stack.directory.admin.password);
  return l;
}
/**
 * The attribute as every DC holds it. The password service writes to the first DC it can reach:
 * after tests/integration/directory-failover.test.ts that may be dc2 (dc1 in the service's 60 s
 * cooldown), and the DCs replicate later. So a write is looked for on every DC and "nothing
 * written" means nothing on any DC.
 */
const readAttrEveryDc = async (dn: string, attr: string) =>
  Promise.all(
    stack.directory.dcs.map(async (dc) => {
      const l = await adminLdap(dc.url);
      try {
        const v = (await l.search(dn, { scope: 'base', attributes: [attr] })).searchEntries[0]?.[attr];
        return Array.isArray(v) && v.length === 0 ? undefined : (v as string | undefined);
      } finally {
        await l.unbind();
      }
    }),
  );
/**
 * A FILETIME attribute's value closest to now on any DC, in epoch ms: the DC that took the write
 * holds it, the other may still hold the seeded value (ten years ahead on a fresh directory, so
 * "the newest" would pick the stale one) until replication.
 */
const writtenTimeMs = async (dn: string, attr: string) => {
  const now = Date.now();
  const values = (await readAttrEveryDc(dn, attr)).filter((v): v is string => v !== undefined).map((v) => Number((BigInt(String(v)) - 116444736000000000n) / 10000n));
  return values.length ? values.reduce((best, v) => (Math.abs(v - now) < Math.abs(best - now) ? v : best)) : undefined;
};

const NEVER = ['SRV-DCLIKE-01', 'SRV-RODC-01', 'SRV-UNCON-01', 'SRV-PT-01', 'WS-SENS-DIRECT', 'WS-SENS-NESTED', 'WS-SENS-PRIMARY', 'WS-ADMINCOUNT', 'SRV-T0-01', 'DC1'];

describe('computers: listing and detail', () => {
  it('lists the operator’s scope: standard and VIP computers of OU=Managed, never a never-manageable one, never a password', async () => {
    const c = await signedIn('op-helpdesk');
    const r = await c.get('/api/computers');
    expect(r.status).toBe(200);
    const names = r.body.items.map((i: any) => i.name).sort();
    expect(names).toEqual(['SRV-NORIGHTS-01', 'WS-STD-01', 'WS-STD-02', 'WS-STD-03', 'WS-STD-04', 'WS-STD-05', 'WS-VIP-01']);
    expect(r.body.items.find((i: any) => i.name === 'WS-VIP-01').protected).toBe(true);
    expect(r.body).toMatchObject({ truncated: false, incomplete: false });
    for (const canary of LAPS_CANARIES) expect(r.text).not.toContain(canary);
  });

  it('never lists a never-manageable computer, even to the Super administrator', async () => {
    const c = await signedIn('op-super');
    const names = (await c.get('/api/computers')).body.items.map((i: any) => i.name);
    for (const n of NEVER) expect(names).not.toContain(n);
    expect(names).toEqual(expect.arrayContaining(['WS-STD-01', 'WS-BR-01', 'WS-VIP-01']));
    expect(names).not.toContain('WS-OTHER-01');
  });

  it('searches by name and narrows by OU, never widening the scope', async () => {
    const c = await signedIn('op-helpdesk');
    expect((await c.get('/api/computers?q=STD-01')).body.items.map((i: any) => i.name)).toEqual(['WS-STD-01']);
    expect((await c.get('/api/computers?q=BR-01')).body.items).toEqual([]);
    const branch = stack.directory.managedOus.find((o) => o.startsWith('OU=Branch'))!;
    expect((await c.get(`/api/computers?ou=${encodeURIComponent(branch)}`)).body.items).toEqual([]);
    const ws = `OU=Workstations,${stack.directory.managedOus.find((o) => o.startsWith('OU=Managed'))!}`;
    const inWs = (await c.get(`/api/computers?ou=${encodeURIComponent(ws)}`)).body.items.map((i: any) => i.name);
    expect(inWs).toContain('WS-STD-01');
    expect(inWs).not.toContain('SRV-NORIGHTS-01');
  });

  it('pages with an opaque cursor valid for that operator only', async () => {
    const c = await signedIn('op-super');
    // a one-character search still returns everything readable; the cursor is refused to another operator
    const first = await c.get('/api/computers?q=S');
    expect(first.status).toBe(200);
    const forged = await (await signedIn('op-helpdesk')).get(`/api/computers?cursor=${encodeURIComponent('v1.AAAA.BBBB.CCCC')}`);
    expect(forged.status).toBe(400);
    expect(forged.body.code).toBe('invalid_cursor');
  });

  it('answers detail with display hints, and 404 with the body of an unknown id for everything not readable', async () => {
    const c = await signedIn('op-helpdesk');
    const ok = await c.get(`/api/computers/${computer('WS-STD-01').guid}`);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ name: 'WS-STD-01', enabled: true, actions: { revealLaps: true, expireLaps: true } });
    expect(ok.body.lapsExpiry).toMatch(/^\d{4}-/);
    expect(ok.body.ou).toBe(computer('WS-STD-01').dn.replace(/^CN=WS-STD-01,/, '')); // its container, shown by the web app
    const vip = await c.get(`/api/computers/${computer('WS-VIP-01').guid}`);
    expect(vip.body).toMatchObject({ protected: true, actions: { revealLaps: false, expireLaps: false } });

    const unknown = await c.get('/api/computers/00000000-0000-0000-0000-000000000000');
    expect(unknown.status).toBe(404);
    for (const n of [...NEVER, 'WS-BR-01', 'WS-OTHER-01']) {
      const mark = await auditMark();
      const r = await c.get(`/api/computers/${computer(n).guid}`);
      expect([n, r.status, r.text]).toEqual([n, 404, unknown.text]);
      expect((await auditSince(mark)).find((x) => x.event === 'authz.decision')).toMatchObject({ outcome: 'denied' });
    }
    expect((await c.get('/api/computers/not-a-guid')).text).toBe(unknown.text);
  });
});

describe('LAPS reveal', () => {
  it('requires a ticket, a confirmation and a strict step-up, each refusal audited, nothing revealed', async () => {
    const c = await signedIn('op-helpdesk', { fresh: true });
    const mark = await auditMark();
    const noTicket = await reveal(c, 'WS-STD-01', { confirm: true });
    expect(noTicket.status).toBe(400);
    expect(noTicket.body.code).toBe('ticket_required');
    const noConfirm = await reveal(c, 'WS-STD-01', { ticket: 'INC-1' });
    expect(noConfirm.status).toBe(400);
    expect(noConfirm.body.code).toBe('confirmation_required');
    const noStepUp = await reveal(c, 'WS-STD-01');
    expect(noStepUp.status).toBe(403);
    expect(noStepUp.body).toEqual({ code: 'strict_reauth_required', proof: 'authenticator' });
    const rows = (await auditSince(mark)).filter((r) => r.event === 'computers.laps.read');
    expect(rows.map((r) => [r.outcome, r.reason])).toEqual([
      ['denied', 'ticket_required'],
      ['denied', 'confirmation_required'],
      ['denied', 'strict_reauth_required'],
    ]);
    expect(rows[2].ticket).toBe('INC-4242');
  });

  it('reveals the Windows LAPS password once, audited with ticket and source', async () => {
    const c = await steppedUp('op-helpdesk');
    const mark = await auditMark();
    const r = await reveal(c, 'WS-STD-01');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ account: 'Administrator', password: computer('WS-STD-01').lapsPassword, source: 'windows' });
    expect(r.body.updatedUtc).toMatch(/^\d{4}-/);
    expect(r.body.expiresUtc).toMatch(/^\d{4}-/);
    expect(r.headers['cache-control']).toBe('no-store');
    const rows = await auditSince(mark);
    expect(rows.find((x) => x.event === 'authz.decision')).toMatchObject({ outcome: 'allowed', details: { action: 'computers.laps.read' } });
    expect(rows.find((x) => x.event === 'computers.laps.read')).toMatchObject({ outcome: 'success', reason: 'source:windows', ticket: 'INC-4242', actor: { name: 'op-helpdesk' } });
    expect(JSON.stringify(rows)).not.toContain(computer('WS-STD-01').lapsPassword!);
  });

  it('reads the legacy attribute when there is no Windows LAPS password, and prefers Windows LAPS when both exist', async () => {
    const c = await steppedUp('op-helpdesk');
    const legacy = await reveal(c, 'WS-STD-02');
    expect(legacy.body).toMatchObject({ password: computer('WS-STD-02').lapsLegacyPassword, source: 'legacy' });
    const both = await reveal(c, 'WS-STD-05');
    expect(both.body).toMatchObject({ password: computer('WS-STD-05').lapsPassword, source: 'windows' });
  });

  it.each([
    ['WS-STD-03', 409, 'laps_encrypted_unsupported'],
    ['WS-STD-04', 409, 'laps_no_password'],
    ['SRV-NORIGHTS-01', 409, 'laps_no_password'],
  ])('%s answers %i %s (audited)', async (name, status, code) => {
    const c = await steppedUp('op-helpdesk');
    const mark = await auditMark();
    const r = await reveal(c, name);
    expect([r.status, r.body.code]).toEqual([status, code]);
    expect((await auditSince(mark)).find((x) => x.event === 'computers.laps.read')).toMatchObject({ outcome: 'denied', reason: code });
  });

  it('refuses a VIP computer without vip.manage in the same delegation (403), and allows it with it', async () => {
    const helpdesk = await steppedUp('op-helpdesk');
    const mark = await auditMark();
    const refused = await reveal(helpdesk, 'WS-VIP-01');
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ code: 'forbidden', reason: 'vip_requires_vip_manage' });
    expect((await auditSince(mark)).filter((x) => x.event === 'computers.laps.read').map((x) => x.outcome)).toEqual(['denied']);
    const admin = await steppedUp('op-super');
    const ok = await reveal(admin, 'WS-VIP-01');
    expect(ok.status).toBe(200);
    expect(ok.body.password).toBe(computer('WS-VIP-01').lapsPassword);
  });

  it.each(NEVER)('never reveals %s, not even to the Super administrator (404 like an unknown id, audited)', async (name) => {
    const admin = await steppedUp('op-super');
    const mark = await auditMark();
    const r = await reveal(admin, name);
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ code: 'not_found' });
    const rows = await auditSince(mark);
    expect(rows.find((x) => x.event === 'authz.decision')).toMatchObject({ outcome: 'denied', reason: expect.stringMatching(/^never_manageable:/) });
    // the answer is a plain 404; the row says why, on the computer, with the ticket
    expect(rows.find((x) => x.event === 'computers.laps.read')).toMatchObject({
      outcome: 'denied',
      reason: expect.stringMatching(/^never_manageable:/),
      ticket: 'INC-4242',
      target: { id: computer(name).guid, name, kind: 'computer' },
    });
  });

  it('answers 404 for a computer outside the operator’s scope or outside every managed OU', async () => {
    const c = await steppedUp('op-helpdesk');
    expect((await reveal(c, 'WS-BR-01')).status).toBe(404);
    expect((await reveal(c, 'WS-OTHER-01')).status).toBe(404);
  });

  it('refuses a permission the operator does not hold anywhere before anything else (403, audited)', async () => {
    const c = await signedIn('op-auditor');
    const mark = await auditMark();
    const r = await reveal(c, 'WS-STD-01');
    expect(r.status).toBe(403);
    expect((await auditSince(mark)).find((x) => x.event === 'authz.decision')).toMatchObject({ outcome: 'denied', details: { permission: 'computers.laps.read' } });
  });

  it('allows at most 5 reads per computer per window, across parallel calls', async () => {
    const c = await steppedUp('op-branch');
    const results = await Promise.all(Array.from({ length: 7 }, () => reveal(c, 'WS-BR-01')));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    expect(results.filter((r) => r.status === 429).every((r) => r.body.code === 'rate_limited')).toBe(true);
  });

  it('audits a rate-limited reveal with the computer, its name and the ticket', async () => {
    const c = await steppedUp('op-branch');
    const mark = await auditMark();
    const r = await reveal(c, 'WS-BR-01');
    expect(r.status).toBe(429);
    expect(r.body).toMatchObject({ code: 'rate_limited', retryAfterSeconds: expect.any(Number) });
    expect(r.body.retryAfterSeconds).toBeGreaterThan(0);
    expect(r.body.retryAfterSeconds).toBeLessThanOrEqual(600);
    expect(r.headers['retry-after']).toBe(String(r.body.retryAfterSeconds));
    expect((await auditSince(mark)).find((x) => x.event === 'computers.laps.read')).toMatchObject({
      outcome: 'denied',
      reason: 'rate_limited',
      ticket: 'INC-4242',
      target: { id: computer('WS-BR-01').guid, name: 'WS-BR-01', dn: computer('WS-BR-01').dn },
    });
  });

  it('answers 503 trust_not_pinned until the password service is pinned', async () => {
    const key = { pk: 'PWDSVC', sk: 'PIN' };
    // the pin is the password service's own (its store)
    const pin = (await serviceStore.get({ Key: key })).Item!;
    await serviceStore.delete({ Key: key });
    try {
      const c = await steppedUp('op-helpdesk');
      const r = await reveal(c, 'WS-STD-05');
      expect([r.status, r.body.code]).toEqual([503, 'trust_not_pinned']);
    } finally {
      await serviceStore.put({ Item: pin });
    }
  });
});

describe('every refused reveal or expiry is one row of its event: target, ticket, precise reason (issue 8)', () => {
  const lapsRow = async (mark: number, event = 'computers.laps.read') => {
    const rows = (await auditSince(mark)).filter((x) => x.event === event);
    expect(rows).toHaveLength(1);
    return rows[0];
  };

  it.each([
    ['laps', 'computers.laps.read', 'computers.laps.read'],
    ['laps/expire', 'computers.laps.expire', 'computers.laps.expire'],
  ])('without the permission anywhere (POST .../%s): 403, the pipeline’s rows carry the computer and the ticket', async (suffix, event, permission) => {
    const c = await signedIn('op-auditor');
    const mark = await auditMark();
    const r = await c.post(`/api/computers/${computer('WS-STD-01').guid}/${suffix}`, { confirm: true, ticket: 'INC-77' });
    expect(r.status).toBe(403);
    expect(await lapsRow(mark, event)).toMatchObject({ outcome: 'denied', reason: 'missing_permission', ticket: 'INC-77', target: { id: computer('WS-STD-01').guid, kind: 'computer' }, actor: { name: 'op-auditor' } });
    expect((await auditSince(mark)).find((x) => x.event === 'authz.decision')).toMatchObject({ outcome: 'denied', ticket: 'INC-77', target: { id: computer('WS-STD-01').guid }, details: { permission } });
  });

  it.each([
    ['WS-BR-01', 'out_of_scope'], // another delegation's OU
    ['WS-OTHER-01', 'out_of_scope'], // outside every managed OU
  ])('%s: 404 like an unknown computer, the row says %s with the computer’s name', async (name, reason) => {
    const c = await steppedUp('op-helpdesk');
    const mark = await auditMark();
    const r = await reveal(c, name);
    expect([r.status, r.body]).toEqual([404, { code: 'not_found' }]);
    expect(await lapsRow(mark)).toMatchObject({ outcome: 'denied', reason, ticket: 'INC-4242', target: { id: computer(name).guid, name, dn: computer(name).dn, kind: 'computer' } });
    expect((await auditSince(mark)).find((x) => x.event === 'authz.decision')).toMatchObject({ reason, ticket: 'INC-4242' });
  });

  it('an unknown GUID and a malformed id: 404, reason not_found, the id as sent', async () => {
    const c = await steppedUp('op-helpdesk');
    for (const id of ['00000000-0000-0000-0000-0000000000aa', 'not-a-guid']) {
      const mark = await auditMark();
      const r = await c.post(`/api/computers/${id}/laps`, { confirm: true, ticket: 'INC-5' });
      expect([id, r.status]).toEqual([id, 404]);
      expect(await lapsRow(mark)).toMatchObject({ outcome: 'denied', reason: 'not_found', ticket: 'INC-5', target: { id, kind: 'computer' } });
    }
  });

  it('a VIP computer without vip.manage: reason vip_requires_vip_manage, not "forbidden"', async () => {
    const c = await steppedUp('op-helpdesk');
    const mark = await auditMark();
    expect((await reveal(c, 'WS-VIP-01')).status).toBe(403);
    expect(await lapsRow(mark)).toMatchObject({ reason: 'vip_requires_vip_manage', ticket: 'INC-4242', target: { id: computer('WS-VIP-01').guid, name: 'WS-VIP-01' } });
  });

  it('a rejected body (ticket of 201 characters, confirm "yes"): 400, audited on the computer; a wrong CSRF token writes nothing', async () => {
    const c = await steppedUp('op-helpdesk');
    const guid = computer('WS-STD-01').guid;
    const cases: Array<[Record<string, unknown>, Record<string, string>, string, string | undefined]> = [
      [{ confirm: true, ticket: 'T'.repeat(201) }, {}, 'validation_failed', 'T'.repeat(200)],
      [{ confirm: 'yes', ticket: 'INC-9' }, {}, 'validation_failed', 'INC-9'],
    ];
    for (const [body, headers, code, ticket] of cases) {
      const mark = await auditMark();
      const r = await c.post(`/api/computers/${guid}/laps`, body, headers);
      expect([code, r.status, r.body.code]).toEqual([code, 400, code]);
      expect(await lapsRow(mark)).toMatchObject({ outcome: 'denied', reason: code, ticket, target: { id: guid, kind: 'computer' } });
    }
    // a forged cross-site request must not write rows in the operator's name (csrf-walk.test.ts)
    const mark = await auditMark();
    expect((await c.post(`/api/computers/${guid}/laps`, { confirm: true, ticket: 'INC-10' }, { 'x-csrf-token': 'not-the-token' })).status).toBe(400);
    expect(await auditSince(mark)).toEqual([]);
  });

  it('an expiry out of scope: 404, computers.laps.expire row with out_of_scope, name and ticket', async () => {
    const c = await steppedUp('op-helpdesk');
    const mark = await auditMark();
    expect((await expireLaps(c, 'WS-BR-01')).status).toBe(404);
    expect(await lapsRow(mark, 'computers.laps.expire')).toMatchObject({ outcome: 'denied', reason: 'out_of_scope', ticket: 'INC-4243', target: { id: computer('WS-BR-01').guid, name: 'WS-BR-01' } });
  });
});

describe('LAPS expire', () => {
  it('sets the legacy expiration time to now through the password service (audited)', async () => {
    const c = await steppedUp('op-helpdesk');
    const dn = computer('WS-STD-02').dn;
    const before = Date.now();
    const mark = await auditMark();
    const r = await expireLaps(c, 'WS-STD-02');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ expired: true });
    const ms = (await writtenTimeMs(dn, 'ms-Mcs-AdmPwdExpirationTime'))!;
    expect(ms).toBeGreaterThanOrEqual(before - 5000);
    expect(ms).toBeLessThanOrEqual(Date.now() + 5000);
    expect((await auditSince(mark)).find((x) => x.event === 'computers.laps.expire')).toMatchObject({ outcome: 'success', ticket: 'INC-4243' });
  });

  it('sets the Windows LAPS expiration time (and the legacy one where present)', async () => {
    const c = await steppedUp('op-super');
    const dn = computer('WS-STD-05').dn;
    expect((await expireLaps(c, 'WS-STD-05')).status).toBe(200);
    const win = (await writtenTimeMs(dn, 'msLAPS-PasswordExpirationTime'))!;
    const leg = (await writtenTimeMs(dn, 'ms-Mcs-AdmPwdExpirationTime'))!;
    expect(Math.abs(win - Date.now())).toBeLessThan(60_000);
    expect(Math.abs(leg - Date.now())).toBeLessThan(60_000);
  });

  it('answers 409 laps_not_managed for a computer without LAPS, nothing written', async () => {
    const c = await steppedUp('op-helpdesk');
    const r = await expireLaps(c, 'WS-STD-04');
    expect([r.status, r.body.code]).toEqual([409, 'laps_not_managed']);
    expect(await readAttrEveryDc(computer('WS-STD-04').dn, 'msLAPS-PasswordExpirationTime')).toEqual(stack.directory.dcs.map(() => undefined));
  });

  it('answers 403 ad_denied when the directory refuses the write, nothing changed', async () => {
    const c = await steppedUp('op-helpdesk');
    const dn = computer('SRV-NORIGHTS-01').dn;
    const before = await readAttrEveryDc(dn, 'msLAPS-PasswordExpirationTime');
    const r = await expireLaps(c, 'SRV-NORIGHTS-01');
    expect([r.status, r.body.code]).toEqual([403, 'ad_denied']);
    expect(await readAttrEveryDc(dn, 'msLAPS-PasswordExpirationTime')).toEqual(before);
  });

  it('never expires a never-manageable computer (404), nothing written', async () => {
    const c = await steppedUp('op-super');
    const dn = computer('WS-ADMINCOUNT').dn;
    const before = await readAttrEveryDc(dn, 'msLAPS-PasswordExpirationTime');
    expect((await expireLaps(c, 'WS-ADMINCOUNT')).status).toBe(404);
    expect(await readAttrEveryDc(dn, 'msLAPS-PasswordExpirationTime')).toEqual(before);
  });
});

describe('no LAPS password in an error body', () => {
  it('collected every non-200 body of this file', () => {
    expect(errorBodies.length).toBeGreaterThan(10);
    for (const body of errorBodies) for (const canary of LAPS_CANARIES) expect(body).not.toContain(canary);
  });
});
