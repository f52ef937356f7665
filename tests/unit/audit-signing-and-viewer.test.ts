import { randomBytes } from 'node:crypto';
import { lookupFacts, lookupPartitions, matchesLookup } from '../../lib/audit/lookup';
import { auditQuerySchema, decodeCursor, encodeCursor, objectHistoryQuerySchema } from '../../lib/audit/query';
import { AuditSigner } from '../../lib/audit/signing';

describe('signed audit chain state', () => {
  const key = randomBytes(32);
  const signer = new AuditSigner(async () => key, 'console');

  it('accepts its own MAC and refuses a changed value, another kind, another chain, another key, a missing MAC', async () => {
    const head = { seq: 7, hash: 'a'.repeat(64), at: '2026-01-01T00:00:00.000Z' };
    const mac = await signer.sign('head', head);
    expect(await signer.check('head', head, mac)).toBe(true);
    expect(await signer.check('head', { ...head, seq: 6 }, mac)).toBe(false);
    expect(await signer.check('anchor', head, mac)).toBe(false);
    expect(await new AuditSigner(async () => key, 'fleet').check('head', head, mac)).toBe(false);
    expect(await new AuditSigner(async () => randomBytes(32), 'console').check('head', head, mac)).toBe(false);
    for (const m of [undefined, null, '', 42, mac!.slice(1)]) expect(await signer.check('head', head, m)).toBe(false);
    // key order of the state does not matter (canonical JSON)
    expect(await signer.check('head', { at: head.at, hash: head.hash, seq: 7 }, mac)).toBe(true);
  });

  it('without a key source signs nothing and checks nothing (the fleet chain today)', async () => {
    const none = new AuditSigner(undefined, 'fleet');
    expect(none.enabled).toBe(false);
    expect(await none.sign('head', {})).toBeUndefined();
    expect(await none.check('head', {}, undefined)).toBe(true);
  });

  it('loads the key again after a failed load', async () => {
    let calls = 0;
    const flaky = new AuditSigner(async () => {
      if (++calls === 1) throw new Error('secrets manager unavailable');
      return key;
    }, 'console');
    await expect(flaky.sign('head', {})).rejects.toThrow('unavailable');
    expect(await flaky.sign('head', {})).toBe(await signer.sign('head', {}));
  });
});

describe('audit viewer: lookups, filters, cursor', () => {
  it('indexes actor and target by id and name in lower case, the event as is', () => {
    const f = lookupFacts({ event: 'computers.laps.read', outcome: 'denied', actor: { id: 'AB-CD', name: 'Op-Helpdesk' }, target: { id: 'EF', name: 'WS-01', dn: 'CN=WS-01' } });
    expect(f).toEqual({ event: 'computers.laps.read', outcome: 'denied', actor: ['ab-cd', 'op-helpdesk'], target: ['ef', 'ws-01'] });
    expect(lookupPartitions('console', f)).toEqual([
      'AUDITIX#console#actor#ab-cd',
      'AUDITIX#console#actor#op-helpdesk',
      'AUDITIX#console#target#ef',
      'AUDITIX#console#target#ws-01',
      'AUDITIX#console#event#computers.laps.read',
    ]);
    // no duplicate partitions, nothing for blank or over-long values
    expect(lookupFacts({ event: 'e', outcome: 'success', actor: { id: 'same', name: 'SAME' }, target: { id: ' ', name: 'x'.repeat(300) } })).toMatchObject({ actor: ['same'], target: [] });
    expect(matchesLookup(f, { actor: 'OP-HELPDESK', target: 'ws-01', event: 'computers.laps.read', outcome: 'denied' })).toBe(true);
    expect(matchesLookup(f, { event: 'Computers.laps.read' })).toBe(false);
    expect(matchesLookup(f, { outcome: 'success' })).toBe(false);
  });

  it('round-trips a cursor and refuses anything else with 400 invalid_cursor (fuzzed)', () => {
    expect(decodeCursor(encodeCursor({ b: 12, l: 3 }))).toEqual({ b: 12, l: 3 });
    const bad = ['', 'x', '%%%', Buffer.from('{"v":1,"b":-1,"l":0}').toString('base64url'), Buffer.from('{"v":2,"b":1,"l":0}').toString('base64url'), Buffer.from('{"v":1,"b":1.5,"l":0}').toString('base64url'), Buffer.from('[]').toString('base64url'), Buffer.from('null').toString('base64url')];
    for (let i = 0; i < 500; i++) bad.push(randomBytes(1 + (i % 60)).toString(i % 2 ? 'base64url' : 'latin1'));
    for (const s of bad) {
      try {
        const c = decodeCursor(s);
        // a random string that happens to decode must still be a well-formed cursor
        expect(Number.isSafeInteger(c.b) && Number.isSafeInteger(c.l) && c.b >= 0 && c.l >= 0).toBe(true);
      } catch (e) {
        expect(e).toMatchObject({ status: 400, code: 'invalid_cursor' });
      }
    }
  });

  it('validates the query: time range order, bounds, unknown parameters', () => {
    expect(auditQuerySchema.parse({})).toEqual({ limit: 50 });
    expect(auditQuerySchema.parse({ from: '2026-01-01T00:00:00Z', to: '2026-01-01T01:00:00+01:00', limit: '10' })).toMatchObject({ limit: 10 });
    const issue = auditQuerySchema.safeParse({ from: '2026-01-02T00:00:00Z', to: '2026-01-01T00:00:00Z' }).error!.issues[0] as { params?: { code?: string } };
    expect(issue.params?.code).toBe('invalid_time_range');
    for (const q of [{ limit: '0' }, { limit: '201' }, { from: 'yesterday' }, { actr: 'x' }, { target: '' }, { outcome: 'x'.repeat(33) }]) expect(auditQuerySchema.safeParse(q).success).toBe(false);
    expect(objectHistoryQuerySchema.safeParse({ target: 'x' }).success).toBe(false);
    expect(objectHistoryQuerySchema.safeParse({ event: 'x' }).success).toBe(true);
  });
});
