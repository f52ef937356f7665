import fs from 'node:fs';
import { Client } from 'ldapts';
import { AuditChain } from '../../lib/audit';
import { loadConfig } from '../../lib/config';
import { SERVICE_CHAIN } from '../../lib/password-service/link/service-chain';
import { bitlockerWindow, lapsWindow } from '../../lib/password-service/service-side/service';
import { countInWindow, windowKey } from '../../lib/store/window';
import type { ConsoleClient } from '../../local/console-client';
import { auditMark, auditSince, bitlockerCanaries, serviceStore, signedIn, stack, steppedUp } from '../support/stack';

// BitLocker recovery keys (issue 33) against the Samba directory: the console lists the entries
// with its read account (never the key), the password service alone reads a recovery password with
// the BitLocker account, through the LAPS reveal's chain (ticket, strict step-up, confirmation,
// decision on fresh facts, classification, rate window, both audit chains).

interface RecoverySeed {
  keyId: string;
  volumeGuid: string;
  date: string;
  dn: string;
  password: string;
}
type SeedComputer = (typeof stack.directory.computers)[number] & { bitlocker?: RecoverySeed[] };
const computer = (name: string) => {
  const c = stack.directory.computers.find((x) => x.name === name) as SeedComputer | undefined;
  if (!c) throw new Error(`no seeded computer ${name}`);
  return c;
};
const keysOf = (name: string) => computer(name).bitlocker ?? [];
const key = (name: string, i = 0) => {
  const k = keysOf(name)[i];
  if (!k) throw new Error(`${name} has no seeded recovery entry ${i}`);
  return k;
};
/** Every seeded recovery password: none may appear in an answer other than its reveal, a row or a log. */
const BITLOCKER_CANARIES = bitlockerCanaries();
const errorBodies: string[] = [];
const TICKET = 'INC-3333';

async function reveal(c: ConsoleClient, name: string, keyId: string, body: Record<string, unknown> = { confirm: true, ticket: TICKET }) {
  const r = await c.post(`/api/computers/${computer(name).guid}/bitlocker/${keyId}`, body);
  if (r.status !== 200) errorBodies.push(r.text);
  return r;
}
async function list(c: ConsoleClient, name: string) {
  const r = await c.get(`/api/computers/${computer(name).guid}/bitlocker`);
  errorBodies.push(r.text); // a list never carries a key, whatever its status
  return r;
}
const serviceRows = async (correlationId: string) => {
  const rows = [];
  let scanned = 0;
  for await (const row of new AuditChain(serviceStore, SERVICE_CHAIN).rows({ reverse: true })) {
    if (row.correlationId === correlationId) rows.push(row);
    if (++scanned >= 500) break;
  }
  return rows;
};

async function readAs(upn: string, password: string, dn: string, url = stack.directory.dcs[0].url) {
  const l = new Client({ url, tlsOptions: { ca: [fs.readFileSync(stack.directory.caFile)] } });
  await l.bind(upn, password);
  try {
    const e = (await l.search(dn, { scope: 'base', attributes: ['cn', 'msFVE-RecoveryPassword'] })).searchEntries[0];
    const v = e?.['msFVE-RecoveryPassword'];
    return { seen: !!e && !!e.cn && !(Array.isArray(e.cn) && e.cn.length === 0), password: Array.isArray(v) ? (v[0] as string | undefined) : (v as string | undefined) };
  } finally {
    await l.unbind();
  }
}

describe('the local directory: only the BitLocker account reads a recovery password', () => {
  it('seeds recovery entries on several computers, with and without keys', () => {
    expect(keysOf('WS-STD-01')).toHaveLength(2);
    expect(keysOf('WS-BR-01')).toHaveLength(1);
    expect(keysOf('WS-STD-04')).toHaveLength(0);
    for (const k of BITLOCKER_CANARIES) expect(k).toMatch(/^\d{6}(-\d{6}){7}$/);
  });

  it.each(stack.directory.dcs.map((d) => d.url))('on %s the console’s accounts (read, write) and the LAPS and reset accounts cannot read msFVE-RecoveryPassword; svc-bitlocker can', async (url) => {
    const { dn, password } = key('WS-STD-01');
    const t = stack.directory.technicalAccounts;
    // the read account sees the entry (its key id, volume and date) but not the key: confidential, no Control Access
    expect(await readAs(t.read.upn, t.read.password, dn, url)).toEqual({ seen: true, password: undefined });
    for (const who of ['write', 'reset', 'laps'] as const) expect((await readAs(t[who].upn, t[who].password, dn, url)).password).toBeUndefined();
    expect((await readAs(t.bitlocker.upn, t.bitlocker.password, dn, url)).password).toBe(password);
  });
});

describe('GET /api/computers/{id}/bitlocker', () => {
  it('lists key id (prefix and GUID), volume and date, newest first, never the key', async () => {
    const c = await signedIn('op-helpdesk');
    const r = await list(c, 'WS-STD-01');
    expect(r.status).toBe(200);
    const seeded = [...keysOf('WS-STD-01')].sort((a, b) => b.date.localeCompare(a.date));
    expect(r.body).toEqual({
      truncated: false,
      entries: seeded.map((k) => ({ keyId: k.keyId, keyIdPrefix: k.keyId.slice(0, 8), volumeGuid: k.volumeGuid, date: k.date })),
    });
    for (const k of BITLOCKER_CANARIES) expect(r.text).not.toContain(k);
    const detail = await c.get(`/api/computers/${computer('WS-STD-01').guid}`);
    expect(detail.body.actions).toMatchObject({ revealBitlocker: true });
  });

  it('lists nothing for a computer without recovery entries', async () => {
    const r = await list(await signedIn('op-helpdesk'), 'WS-STD-04');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ entries: [], truncated: false });
  });

  it('answers 404 like an unknown id for never-manageable, unmanaged and out-of-scope computers (audited)', async () => {
    const c = await signedIn('op-helpdesk');
    const unknown = await c.get('/api/computers/00000000-0000-0000-0000-000000000000/bitlocker');
    expect(unknown.status).toBe(404);
    for (const n of ['SRV-T0-01', 'WS-SENS-DIRECT', 'WS-OTHER-01', 'WS-BR-01']) {
      const mark = await auditMark();
      const r = await list(c, n);
      expect([n, r.status, r.text]).toEqual([n, 404, unknown.text]);
      expect((await auditSince(mark)).find((x) => x.event === 'authz.decision')).toMatchObject({ outcome: 'denied', details: { action: 'computers.bitlocker.read' } });
    }
  });

  it('refuses an operator without computers.bitlocker.read (403)', async () => {
    const r = await list(await signedIn('op-auditor'), 'WS-STD-01');
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('forbidden');
  });
});

describe('POST /api/computers/{id}/bitlocker/{keyId}', () => {
  it('requires a ticket, a confirmation and a strict step-up, each refusal audited, nothing revealed', async () => {
    const c = await signedIn('op-helpdesk', { fresh: true });
    const { keyId } = key('WS-STD-01');
    const mark = await auditMark();
    const noTicket = await reveal(c, 'WS-STD-01', keyId, { confirm: true });
    expect([noTicket.status, noTicket.body.code]).toEqual([400, 'ticket_required']);
    const noConfirm = await reveal(c, 'WS-STD-01', keyId, { ticket: TICKET });
    expect([noConfirm.status, noConfirm.body.code]).toEqual([400, 'confirmation_required']);
    const noStepUp = await reveal(c, 'WS-STD-01', keyId);
    expect(noStepUp.status).toBe(403);
    expect(noStepUp.body).toEqual({ code: 'strict_reauth_required', proof: 'authenticator' });
    const rows = (await auditSince(mark)).filter((r) => r.event === 'computers.bitlocker.read');
    expect(rows.map((r) => [r.outcome, r.reason])).toEqual([
      ['denied', 'ticket_required'],
      ['denied', 'confirmation_required'],
      ['denied', 'strict_reauth_required'],
    ]);
    expect(rows.every((r) => r.target?.id === computer('WS-STD-01').guid)).toBe(true);
  });

  it('reveals one recovery password once: both chains hold their row, the key in neither', async () => {
    const c = await steppedUp('op-helpdesk');
    const k = key('WS-STD-01', 1);
    const mark = await auditMark();
    const r = await reveal(c, 'WS-STD-01', k.keyId.toLowerCase());
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ keyId: k.keyId, volumeGuid: k.volumeGuid, recoveryPassword: k.password, date: k.date });
    expect(r.headers['cache-control']).toBe('no-store');
    const rows = await auditSince(mark);
    expect(rows.find((x) => x.event === 'authz.decision')).toMatchObject({ outcome: 'allowed', details: { action: 'computers.bitlocker.read' } });
    expect(rows.find((x) => x.event === 'computers.bitlocker.read')).toMatchObject({
      outcome: 'success',
      reason: `key:${k.keyId}`,
      ticket: TICKET,
      actor: { name: 'op-helpdesk' },
      target: { id: computer('WS-STD-01').guid, name: 'WS-STD-01' },
    });
    const correlationId = String(r.headers['x-correlation-id']);
    const service = await serviceRows(correlationId);
    expect(service.map((x) => [x.event, x.outcome])).toEqual([['bitlocker.read', 'admitted']]);
    expect(service[0]).toMatchObject({ actor: { name: 'op-helpdesk' }, target: { id: computer('WS-STD-01').guid }, details: { keyId: k.keyId, vipAllowed: false } });
    expect(JSON.stringify([...rows, ...service])).not.toContain(k.password);
  });

  it('refuses a VIP computer without vip.manage (403), and allows it with it', async () => {
    const helpdesk = await steppedUp('op-helpdesk');
    const refused = await reveal(helpdesk, 'WS-VIP-01', key('WS-VIP-01').keyId);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ code: 'forbidden', reason: 'vip_requires_vip_manage' });
    const ok = await reveal(await steppedUp('op-super'), 'WS-VIP-01', key('WS-VIP-01').keyId);
    expect(ok.status).toBe(200);
    expect(ok.body.recoveryPassword).toBe(key('WS-VIP-01').password);
  });

  it.each(['SRV-T0-01', 'WS-SENS-DIRECT'])('never reveals a key of %s, not even to the Super administrator (404, audited with the reason)', async (name) => {
    const admin = await steppedUp('op-super');
    const mark = await auditMark();
    const r = await reveal(admin, name, key(name).keyId);
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ code: 'not_found' });
    expect((await auditSince(mark)).find((x) => x.event === 'computers.bitlocker.read')).toMatchObject({
      outcome: 'denied',
      reason: expect.stringMatching(/^never_manageable:/),
      ticket: TICKET,
      target: { id: computer(name).guid, name },
    });
  });

  it('answers 404 for an unmanaged or out-of-scope computer, an unknown or malformed key id, and a key of another computer', async () => {
    const c = await steppedUp('op-helpdesk');
    const notFound = async (name: string, keyId: string, reason: unknown) => {
      const mark = await auditMark();
      const r = await reveal(c, name, keyId);
      expect([name, keyId, r.status, r.body]).toEqual([name, keyId, 404, { code: 'not_found' }]);
      expect((await auditSince(mark)).find((x) => x.event === 'computers.bitlocker.read')).toMatchObject({ outcome: 'denied', reason });
    };
    await notFound('WS-OTHER-01', key('WS-OTHER-01').keyId, expect.stringMatching(/not_managed|out_of_scope/));
    await notFound('WS-BR-01', key('WS-BR-01').keyId, 'out_of_scope');
    await notFound('WS-STD-01', '00000000-0000-4000-A000-000000000000', 'bitlocker_key_not_found');
    await notFound('WS-STD-01', 'not-a-key', 'bitlocker_key_not_found');
    // a key id of another computer names no entry below this one
    await notFound('WS-STD-05', key('WS-STD-01').keyId, 'bitlocker_key_not_found');
    // the directory is the last check: svc-bitlocker holds no right in OU=NoLapsRights, the entry is invisible to it
    await notFound('SRV-NORIGHTS-01', key('SRV-NORIGHTS-01').keyId, 'bitlocker_key_not_found');
  });

  it('refuses an operator without computers.bitlocker.read before anything else (403, audited)', async () => {
    const c = await signedIn('op-auditor');
    const mark = await auditMark();
    const r = await reveal(c, 'WS-STD-01', key('WS-STD-01').keyId);
    expect(r.status).toBe(403);
    const rows = await auditSince(mark);
    expect(rows.find((x) => x.event === 'authz.decision')).toMatchObject({ outcome: 'denied', details: { permission: 'computers.bitlocker.read' } });
    expect(rows.find((x) => x.event === 'computers.bitlocker.read')).toMatchObject({ outcome: 'denied', target: { id: computer('WS-STD-01').guid }, ticket: TICKET });
  });

  it('has its own rate window: at most 5 reveals per computer per window, the LAPS window untouched', async () => {
    const { config } = loadConfig({ ...process.env });
    const guid = computer('WS-BR-01').guid;
    const bl = bitlockerWindow(config, guid);
    await serviceStore.delete({ Key: windowKey(bl) });
    const lapsBefore = await countInWindow(serviceStore, lapsWindow(config, guid));
    const c = await steppedUp('op-branch');
    const results = await Promise.all(Array.from({ length: 7 }, () => reveal(c, 'WS-BR-01', key('WS-BR-01').keyId)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 429, 429]);
    const limited = results.find((r) => r.status === 429)!;
    expect(limited.body).toMatchObject({ code: 'rate_limited', retryAfterSeconds: expect.any(Number) });
    expect(await countInWindow(serviceStore, bl)).toBe(5);
    expect(await countInWindow(serviceStore, lapsWindow(config, guid))).toBe(lapsBefore);
    const mark = await auditMark();
    expect((await reveal(c, 'WS-BR-01', key('WS-BR-01').keyId)).status).toBe(429);
    expect((await auditSince(mark)).find((x) => x.event === 'computers.bitlocker.read')).toMatchObject({ outcome: 'denied', reason: 'rate_limited', ticket: TICKET });
  });
});

describe('search by key id: the first 8 characters find the computer, within the operator’s scope only', () => {
  const search = async (who: string, q: string) => {
    const r = await (await signedIn(who)).get(`/api/computers?q=${encodeURIComponent(q)}`);
    expect(r.status).toBe(200);
    for (const k of BITLOCKER_CANARIES) expect(r.text).not.toContain(k);
    return r.body.items.map((i: any) => i.name);
  };

  it('finds the computer by the prefix as read off the screen (any case, with a brace)', async () => {
    const prefix = key('WS-STD-01', 1).keyId.slice(0, 8);
    expect(await search('op-helpdesk', prefix)).toEqual(['WS-STD-01']);
    expect(await search('op-helpdesk', `{${prefix.toLowerCase()}`)).toEqual(['WS-STD-01']);
    expect(await search('op-branch', key('WS-BR-01').keyId.slice(0, 8))).toEqual(['WS-BR-01']);
  });

  it('never finds a computer outside the operator’s scope, nor a never-manageable or unmanaged one', async () => {
    expect(await search('op-branch', key('WS-STD-01').keyId.slice(0, 8))).toEqual([]);
    expect(await search('op-helpdesk', key('WS-BR-01').keyId.slice(0, 8))).toEqual([]);
    for (const n of ['SRV-T0-01', 'WS-SENS-DIRECT', 'WS-OTHER-01']) expect([n, await search('op-super', key(n).keyId.slice(0, 8))]).toEqual([n, []]);
  });
});

describe('diagnostics check the BitLocker rights the way they check the LAPS rights', () => {
  it('per delegated scope: the console’s account lists the sample entry without its key, the BitLocker account reads it', async () => {
    const r = await (await signedIn('op-super')).get('/api/diagnostics');
    expect(r.status).toBe(200);
    expect(r.body.checks.map((x: any) => x.code)).toContain('bitlocker_identity_ok');
    const byScope = Object.fromEntries(r.body.bitlockerScopes.map((s: any) => [s.scope.split(',')[0], s]));
    for (const ou of ['OU=Managed', 'OU=Branch']) {
      expect(byScope[ou].checks.map((x: any) => x.code)).toEqual(['bitlocker_console_key_hidden', 'bitlocker_read_rights_effective']);
    }
    expect(byScope['OU=Branch'].sample).toBe('WS-BR-01');
    expect(byScope['OU=Managed'].sample).toMatch(/^WS-STD-0[15]$/);
    for (const k of BITLOCKER_CANARIES) expect(r.text).not.toContain(k);
  });
});

describe('the delegation export includes the BitLocker rights where computers.bitlocker.read is delegated', () => {
  it('answers the BitLocker account\'s model (RPLCLORC and RPCR on msFVE-RecoveryPassword, recovery objects only), its script, and that the directory holds it', async () => {
    const c = await steppedUp('op-super');
    const r = await c.get('/api/admin/delegation-export');
    expect(r.status).toBe(200);
    const bl = r.body.exports.find((e: { kind: string }) => e.kind === 'bitlocker');
    expect(bl.identity).toBe(stack.directory.technicalAccounts.bitlocker.upn);
    const byOu = Object.fromEntries(bl.ous.map((o: any) => [o.dn.split(',')[0], o]));
    for (const ou of ['OU=Managed', 'OU=Branch']) {
      expect(byOu[ou].permissions).toEqual(['computers.bitlocker.read']);
      expect(byOu[ou].rights).toEqual([
        `(OA;CIIO;RPLCLORC;;msFVE-RecoveryInformation;${bl.identity})`,
        `(OA;CIIO;RPCR;msFVE-RecoveryPassword;msFVE-RecoveryInformation;${bl.identity})`,
      ]);
    }
    // dc.sh granted exactly these: the directory holds the model
    expect(bl.status).toMatchObject({ kind: 'bitlocker', upToDate: true, missing: [] });
    expect(bl.script).toContain('BitLocker account');
    expect(bl.script).toContain('msFVE-KeyPackage is never granted');
    const ps1 = await c.get('/api/admin/delegation-export/bitlocker');
    expect(ps1.status).toBe(200);
    expect(ps1.headers['x-model-digest']).toBe(bl.modelDigest);
  });
});

describe('no recovery password in an error body', () => {
  it('collected every non-200 body and every list of this file', () => {
    expect(errorBodies.length).toBeGreaterThan(20);
    for (const body of errorBodies) for (const k of BITLOCKER_CANARIES) expect(body).not.toContain(k);
  });
});
