import { AuditChain } from '../../lib/audit';
import { accountSubject, admitSignIn, admitStepUp, type SignInLimits } from '../../lib/auth/rate-limit';
import { satisfies } from '../../lib/auth/stepup';
import { admit, countInWindow, giveBack, takeFromWindows, type WindowEntry, type WindowSpec } from '../../lib/store/window';
import { storedBody } from '../../lib/audit/rows';
import { memoryStore, observe } from '../support/memory-store';

// The sliding-window primitive (DESIGN decision 12) and the sign-in limits built on it. The
// DynamoDB protocol runs here against a stand-in with the same conditional writes that interleaves
// parallel callers; tests/integration/rate-windows.test.ts runs it against DynamoDB Local.

const TEN_MIN = 600_000;
const BOUNDARY = 1_700_000_400_000; // a multiple of 10 minutes: where a fixed window would reset
const entries = (...ts: number[]): WindowEntry[] => ts.map((t, i) => [t, `e${i}`]);

describe('admit (pure): at most `limit` events in any window-long span', () => {
  const spec = { limit: 5, windowMs: TEN_MIN };

  it('refuses the 6th event 0.6 s after five at 9:59.0-9:59.5, across a 10-minute clock boundary', () => {
    const five = entries(...[0, 100, 200, 300, 500].map((d) => BOUNDARY - 1000 + d));
    const d = admit(five, spec, BOUNDARY + 100);
    expect(d.admitted).toBe(false);
    // free again when the oldest leaves the span: 10 minutes after it
    expect(d.retryAfterMs).toBe(BOUNDARY - 1000 + TEN_MIN - (BOUNDARY + 100));
  });

  it('admits again once the oldest event is more than a window old, not before', () => {
    const five = entries(...[0, 100, 200, 300, 500].map((d) => BOUNDARY - 1000 + d));
    expect(admit(five, spec, BOUNDARY - 1000 + TEN_MIN - 1).admitted).toBe(false);
    expect(admit(five, spec, BOUNDARY - 1000 + TEN_MIN).admitted).toBe(true);
  });

  it('ignores entries older than the span and names the entry whose expiry frees a place', () => {
    const d = admit(entries(0, 10, BOUNDARY, BOUNDARY + 1, BOUNDARY + 2, BOUNDARY + 3, BOUNDARY + 4), spec, BOUNDARY + 5);
    expect(d.live).toHaveLength(5);
    expect(d.retryAfterMs).toBe(TEN_MIN - 5);
  });
});

describe('takeFromWindows (conditional writes)', () => {
  const spec = (over: Partial<WindowSpec> = {}): WindowSpec => ({ scope: 'test', subject: 'one', limit: 5, windowMs: TEN_MIN, ...over });

  it('admits exactly 5 of 20 parallel attempts on one subject', async () => {
    const store = memoryStore();
    const results = await Promise.all(Array.from({ length: 20 }, () => takeFromWindows(store, [spec()])));
    expect(results.filter((r) => r.admitted)).toHaveLength(5);
    expect(await countInWindow(store, spec())).toBe(5);
  });

  it('10 reads in 9.5 s across a 10-minute boundary: 5 admitted (a fixed window would admit all 10)', async () => {
    const store = memoryStore();
    const times = Array.from({ length: 10 }, (_, i) => BOUNDARY - 5000 + i * 1000);
    const admitted: number[] = [];
    for (const t of times) if ((await takeFromWindows(store, [spec()], { now: () => t })).admitted) admitted.push(t);
    expect(admitted).toEqual(times.slice(0, 5));
    // the window slides: 10 minutes after the first event one place is free again
    expect((await takeFromWindows(store, [spec()], { now: () => times[0] + TEN_MIN })).admitted).toBe(true);
    expect((await takeFromWindows(store, [spec()], { now: () => times[0] + TEN_MIN + 1 })).admitted).toBe(false);
  });

  it('counts in all windows or in none: a refusing window leaves the others untouched', async () => {
    const store = memoryStore();
    const full = spec({ subject: 'full', limit: 1 });
    const other = spec({ subject: 'other' });
    expect((await takeFromWindows(store, [full])).admitted).toBe(true);
    const r = await takeFromWindows(store, [other, full]);
    expect(r).toMatchObject({ admitted: false, refusedBy: 'test' });
    expect(await countInWindow(store, other)).toBe(0);
  });

  it('gives an admitted event back', async () => {
    const store = memoryStore();
    const r = await takeFromWindows(store, [spec()]);
    if (!r.admitted) throw new Error('not admitted');
    await giveBack(store, [spec()], r.id);
    expect(await countInWindow(store, spec())).toBe(0);
  });

  it('keeps subjects apart and stores no subject in clear', async () => {
    const store = memoryStore();
    await takeFromWindows(store, [spec({ subject: '203.0.113.7' })]);
    expect(await countInWindow(store, spec({ subject: '203.0.113.8' }))).toBe(0);
    expect(JSON.stringify([...store.items.entries()])).not.toContain('203.0.113.7');
  });
});

describe('takeFromWindows without a read first (assumeSpanEmpty: the LAPS admission)', () => {
  const spec = (over: Partial<WindowSpec> = {}): WindowSpec => ({ scope: 'laps', subject: 'pc', limit: 5, windowMs: TEN_MIN, ...over });
  /** the store, and how many reads it answered */
  const counted = () => {
    const store = memoryStore();
    const calls = { reads: 0, writes: 0 };
    observe(store, (op) => {
      if (op === 'get') calls.reads++;
      else calls.writes++;
    });
    return { store, calls };
  };

  it('a window never used, or whose entries have all left the span, is taken in one write and no read', async () => {
    const { store, calls } = counted();
    expect(await takeFromWindows(store, [spec()], { assumeSpanEmpty: true, now: () => BOUNDARY })).toMatchObject({ admitted: true });
    expect(calls).toEqual({ reads: 0, writes: 1 });
    // exactly one window later the entry has left the span: one write again, the version still moves
    const before = [...store.items.values()][0].version;
    expect(await takeFromWindows(store, [spec()], { assumeSpanEmpty: true, now: () => BOUNDARY + TEN_MIN })).toMatchObject({ admitted: true });
    expect(calls).toEqual({ reads: 0, writes: 2 });
    expect([...store.items.values()][0].version).toBe(before + 1);
  });

  it('a window with a live entry (1 ms short of leaving) refuses the unread write: read, decided, counted once', async () => {
    const { store, calls } = counted();
    await takeFromWindows(store, [spec()], { assumeSpanEmpty: true, now: () => BOUNDARY });
    expect(await takeFromWindows(store, [spec()], { assumeSpanEmpty: true, now: () => BOUNDARY + TEN_MIN - 1 })).toMatchObject({ admitted: true });
    expect(calls).toEqual({ reads: 1, writes: 3 });
    expect(await countInWindow(store, spec(), { now: () => BOUNDARY + TEN_MIN - 1 })).toBe(2);
  });

  it('10 reads in 9.5 s across a 10-minute boundary: the same 5 admitted as with a read first, then one place 10 minutes on', async () => {
    const store = memoryStore();
    const times = Array.from({ length: 10 }, (_, i) => BOUNDARY - 5000 + i * 1000);
    const admitted: number[] = [];
    for (const t of times) if ((await takeFromWindows(store, [spec()], { assumeSpanEmpty: true, now: () => t })).admitted) admitted.push(t);
    expect(admitted).toEqual(times.slice(0, 5));
    expect((await takeFromWindows(store, [spec()], { assumeSpanEmpty: true, now: () => times[0] + TEN_MIN })).admitted).toBe(true);
    expect((await takeFromWindows(store, [spec()], { assumeSpanEmpty: true, now: () => times[0] + TEN_MIN + 1 })).admitted).toBe(false);
  });

  it('a burst of 20 parallel takes, unread and read-first mixed, on a window whose old entries expired: exactly 5', async () => {
    const store = memoryStore();
    for (let i = 0; i < 5; i++) await takeFromWindows(store, [spec()], { now: () => BOUNDARY - TEN_MIN - 10 + i });
    const now = () => BOUNDARY;
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => takeFromWindows(store, [spec()], { assumeSpanEmpty: i % 2 === 0, now })));
    expect(results.filter((r) => r.admitted)).toHaveLength(5);
    expect(await countInWindow(store, spec(), { now })).toBe(5);
  });
});

const limits: SignInLimits = {
  MaxFailuresPerAccountAndAddress: 5,
  MaxFailuresPerAddress: 20,
  MaxFailuresPerAccount: 10,
  AccountSlowdown: 2,
  MaxStepUpFailures: 5,
  FailureWindow: 900,
};

describe('sign-in limits', () => {
  const guid = '6f1c2a4e-0b7d-4e8a-9c3f-1a2b3c4d5e6f';

  it('keys a resolved account on its objectGUID whatever was typed; an unknown name on its bare lower-case form', () => {
    for (const typed of ['alice', 'CORP\\alice', 'x\\alice', 'alice@corp.example.test', 'ALICE']) {
      expect(accountSubject(guid, typed)).toBe(`guid:${guid}`);
      expect(accountSubject(undefined, typed)).toBe('name:alice');
    }
    expect(accountSubject(guid.toUpperCase(), 'alice')).toBe(`guid:${guid}`);
  });

  it('10 parallel wrong passwords from one address: 5 admitted, 5 refused (account_address)', async () => {
    const store = memoryStore();
    const results = await Promise.all(Array.from({ length: 10 }, () => admitSignIn(store, limits, `guid:${guid}`, '192.0.2.1', async () => undefined)));
    const admitted = results.filter((r) => r.admitted);
    expect(admitted).toHaveLength(5);
    expect(results.filter((r) => !r.admitted).map((r) => !r.admitted && r.limit)).toEqual(Array(5).fill('account_address'));
    for (const a of admitted) if (a.admitted) await a.failed();
    expect((await admitSignIn(store, limits, `guid:${guid}`, '192.0.2.1', async () => undefined)).admitted).toBe(false);
  });

  it('a success gives its places back: only failures stay counted', async () => {
    const store = memoryStore();
    for (let i = 0; i < 10; i++) {
      const a = await admitSignIn(store, limits, `guid:${guid}`, '192.0.2.2', async () => undefined);
      expect(a.admitted).toBe(true);
      if (a.admitted) await a.succeeded();
    }
  });

  it('strangers failing from 6 other addresses slow the account but never refuse its owner at his own address', async () => {
    const store = memoryStore();
    for (let addr = 10; addr < 16; addr++) {
      for (let i = 0; i < 6; i++) {
        const a = await admitSignIn(store, limits, `guid:${guid}`, `198.51.100.${addr}`, async () => undefined);
        if (a.admitted) await a.failed();
      }
    }
    const waited: number[] = [];
    const owner = await admitSignIn(store, limits, `guid:${guid}`, '192.0.2.50', async (ms) => waited.push(ms));
    expect(owner).toMatchObject({ admitted: true, slowed: true });
    expect(waited).toEqual([2000]);
  });

  it('per address: the 21st failure from one address on 21 names is refused (address), another address is not', async () => {
    const store = memoryStore();
    for (let i = 0; i < 20; i++) {
      const a = await admitSignIn(store, limits, `name:user${i}`, '192.0.2.9', async () => undefined);
      expect(a.admitted).toBe(true);
      if (a.admitted) await a.failed();
    }
    expect(await admitSignIn(store, limits, 'name:user99', '192.0.2.9', async () => undefined)).toMatchObject({ admitted: false, limit: 'address' });
    expect((await admitSignIn(store, limits, 'name:user99', '192.0.2.10', async () => undefined)).admitted).toBe(true);
  });

  it('failed step-ups have their own window and do not refuse sign-ins', async () => {
    const store = memoryStore();
    for (let i = 0; i < 5; i++) {
      const a = await admitStepUp(store, limits, guid, async () => undefined);
      if (a.admitted) await a.failed();
    }
    expect(await admitStepUp(store, limits, guid, async () => undefined)).toMatchObject({ admitted: false, limit: 'step_up' });
    expect((await admitSignIn(store, limits, `guid:${guid}`, '192.0.2.60', async () => undefined)).admitted).toBe(true);
  });
});

describe('step-up window strength', () => {
  it('a window opened with the password does not satisfy the authenticator; the authenticator satisfies both', () => {
    expect(satisfies('password', 'authenticator')).toBe(false);
    expect(satisfies('password', 'password')).toBe(true);
    expect(satisfies('authenticator', 'password')).toBe(true);
    expect(satisfies('authenticator', 'authenticator')).toBe(true);
    expect(satisfies(undefined, 'password')).toBe(false);
    expect(satisfies('access', 'password')).toBe(false);
  });
});

describe('a window taken together with the link nonce (one write)', () => {
  const spec = { scope: 'pwdsvc-laps', subject: 'c0ffee00-0000-4000-8000-000000000001', limit: 5, windowMs: 600_000 };
  const nonceItem = (nonce: string) => ({ name: 'link_nonce', items: [{ Put: { TableName: 'memory', Item: { pk: 'LINKNONCE', sk: nonce }, ConditionExpression: 'attribute_not_exists(pk)' } }] });
  const along = (nonce: string) => () => [nonceItem(nonce)];

  it('a replayed nonce is refused as such and counts nothing', async () => {
    const store = memoryStore();
    expect(await takeFromWindows(store, [spec], { along: along('n1') })).toMatchObject({ admitted: true });
    expect(await takeFromWindows(store, [spec], { along: along('n1') })).toMatchObject({ admitted: false, refusedBy: 'link_nonce' });
    expect(await countInWindow(store, spec)).toBe(1);
    expect(store.items.has('LINKNONCE\u0000n1')).toBe(true);
  });

  it('parallel takes with fresh nonces admit at most the limit; every admitted one recorded its nonce', async () => {
    const store = memoryStore();
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => takeFromWindows(store, [spec], { along: along(`p${i}`) })));
    const admitted = results.map((r, i) => [r.admitted, i] as const).filter(([a]) => a).map(([, i]) => i);
    expect(admitted).toHaveLength(5);
    for (const i of admitted) expect(store.items.has(`LINKNONCE\u0000p${i}`)).toBe(true);
    expect(results.filter((r) => !r.admitted && r.refusedBy === 'link_nonce')).toHaveLength(0);
  });

  it('a failed condition item (the pin changed) refuses with its name: no count, no nonce, no row', async () => {
    const store = memoryStore();
    store.items.set('PWDSVC\u0000PIN', { pk: 'PWDSVC', sk: 'PIN', data: { domain: 'corp.example.test', caSha256: 'new' } });
    const pinCheck = (ca: string) => ({
      name: 'pin',
      items: [{ ConditionCheck: { TableName: 'memory', Key: { pk: 'PWDSVC', sk: 'PIN' }, ConditionExpression: '#d.#ca = :ca', ExpressionAttributeNames: { '#d': 'data', '#ca': 'caSha256' }, ExpressionAttributeValues: { ':ca': ca } } }],
    });
    const chain = new AuditChain(store, 'pin-test');
    const row = chain.prepare([{ event: 'laps.read', outcome: 'admitted' }]);
    const withRow = async (ca: string) => {
      const d = await chain.draft(row);
      return [nonceItem('n-pin'), pinCheck(ca), { name: 'audit', items: d.items, retryable: true, lost: d.lost, written: d.written }];
    };
    expect(await takeFromWindows(store, [spec], { along: () => withRow('old') })).toMatchObject({ admitted: false, refusedBy: 'pin' });
    expect(await countInWindow(store, spec)).toBe(0);
    expect([...store.items.keys()].filter((key) => /^(LINKNONCE|AUDIT)/.test(key))).toEqual([]);
    expect(await takeFromWindows(store, [spec], { along: () => withRow('new') })).toMatchObject({ admitted: true });
    expect(await countInWindow(store, spec)).toBe(1);
    expect(storedBody(store.items.get('AUDIT#pin-test\u0000' + '1'.padStart(12, '0')))).toMatchObject({ event: 'laps.read', outcome: 'admitted', seq: 1 });
  });

  it('an audit append written along: a head another writer moved is learnt and tried again, the row lands once at the next sequence', async () => {
    const store = memoryStore();
    const mine = new AuditChain(store, 'race-test');
    const other = new AuditChain({ ...store }, 'race-test'); // another process: its own store client
    await mine.append({ event: 'first', outcome: 'success' }); // mine now knows head 1
    await other.append({ event: 'other', outcome: 'success' }); // the head moves to 2 behind its back
    const row = mine.prepare([{ event: 'laps.read', outcome: 'admitted' }]);
    let drafts = 0;
    const taken = await takeFromWindows(store, [spec], {
      along: async () => {
        drafts++;
        const d = await mine.draft(row);
        return [nonceItem('n-race'), { name: 'audit', items: d.items, retryable: true, lost: d.lost, written: d.written }];
      },
    });
    expect(taken).toMatchObject({ admitted: true });
    expect(drafts).toBe(2);
    const rows = [...store.items.values()].filter((it) => it.pk === 'AUDIT#race-test').map((it) => [it.seq, storedBody(it).event]).sort();
    expect(rows).toEqual([
      [1, 'first'],
      [2, 'other'],
      [3, 'laps.read'],
    ]);
    expect(await countInWindow(store, spec)).toBe(1);
  });
});
