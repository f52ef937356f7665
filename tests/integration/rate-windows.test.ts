import { loadConfig } from '../../lib/config';
import { admitLapsOperation, lapsWindow } from '../../lib/password-service/service-side/service';
import { countInWindow, takeFromWindows, windowKey, type WindowSpec } from '../../lib/store/window';
import { auditMark, auditSince, serviceStore, stack, steppedUp, store } from '../support/stack';

// The sliding windows against DynamoDB Local (real conditional writes), with an injected clock
// where a boundary matters, and the LAPS window through the real console and password service.

const TEN_MIN = 600_000;
const BOUNDARY = Math.ceil(Date.now() / TEN_MIN) * TEN_MIN; // the next 10-minute clock boundary
const config = loadConfig({}).config;
const clear = (spec: Pick<WindowSpec, 'scope' | 'subject'>) => store.delete({ Key: windowKey(spec) });

describe("sliding windows on the stack's store", () => {
  it('LAPS window: 10 reads of one computer in 9.5 s across a 10-minute boundary admit 5 (fixed windows admitted 10)', async () => {
    const computer = '0badc0de-0000-4000-8000-000000000001';
    await clear(lapsWindow(config, computer));
    const times = Array.from({ length: 10 }, (_, i) => BOUNDARY - 5000 + i * 1000 + (i === 9 ? -500 : 0)); // 9:55 .. 10:03.5
    const answers = [];
    for (const t of times) answers.push((await admitLapsOperation(store, config, computer, { now: () => t })).admitted);
    expect(answers).toEqual([true, true, true, true, true, false, false, false, false, false]);
    // 10 minutes after the first read one place is free again, and only one
    expect((await admitLapsOperation(store, config, computer, { now: () => times[0] + TEN_MIN })).admitted).toBe(true);
    expect((await admitLapsOperation(store, config, computer, { now: () => times[0] + TEN_MIN + 1 })).admitted).toBe(false);
  });

  it('20 parallel takes on one subject admit exactly 5 (conditional writes, retried on a lost race)', async () => {
    const spec: WindowSpec = { scope: 'test-parallel', subject: `s-${Date.now()}`, limit: 5, windowMs: TEN_MIN };
    const results = await Promise.all(Array.from({ length: 20 }, () => takeFromWindows(store, [spec])));
    expect(results.filter((r) => r.admitted)).toHaveLength(5);
    expect(await countInWindow(store, spec)).toBe(5);
  });

  it('two windows taken together: all or none (a refusal leaves the other window as it was)', async () => {
    const full: WindowSpec = { scope: 'test-full', subject: `f-${Date.now()}`, limit: 1, windowMs: TEN_MIN };
    const other: WindowSpec = { scope: 'test-other', subject: `o-${Date.now()}`, limit: 5, windowMs: TEN_MIN };
    expect((await takeFromWindows(store, [full])).admitted).toBe(true);
    expect(await takeFromWindows(store, [other, full])).toMatchObject({ admitted: false, refusedBy: 'test-full' });
    expect(await countInWindow(store, other)).toBe(0);
  });
});

describe('LAPS reveal window through the console and the password service', () => {
  // the window is the password service's: in its own store
  const clearServiceWindow = (spec: Pick<WindowSpec, 'scope' | 'subject'>) => serviceStore.delete({ Key: windowKey(spec) });
  afterAll(() => clearServiceWindow(lapsWindow(config, stack.directory.computers.find((x) => x.name === 'WS-STD-05')!.guid)));
  it('6 parallel reveals of one computer: 5 answered with the password, 1 with 429 rate_limited (audited)', async () => {
    const computer = stack.directory.computers.find((x) => x.name === 'WS-STD-05')!;
    await clearServiceWindow(lapsWindow(config, computer.guid));
    const c = await steppedUp('op-helpdesk');
    const mark = await auditMark();
    const results = await Promise.all(Array.from({ length: 6 }, () => c.post(`/api/computers/${computer.guid}/laps`, { confirm: true, ticket: 'INC-6006' })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 429]);
    const refused = results.find((r) => r.status === 429)!;
    expect(refused.body.code).toBe('rate_limited');
    // the time until the oldest of the 5 reads (all just now) leaves the 10-minute window, in the body and the header
    expect(refused.body.retryAfterSeconds).toBeGreaterThan(540);
    expect(refused.body.retryAfterSeconds).toBeLessThanOrEqual(600);
    expect(refused.headers['retry-after']).toBe(String(refused.body.retryAfterSeconds));
    const rows = (await auditSince(mark)).filter((x) => x.event === 'computers.laps.read');
    expect(rows.filter((x) => x.outcome === 'success')).toHaveLength(5);
    expect(rows.filter((x) => x.outcome !== 'success')).toEqual([expect.objectContaining({ outcome: 'denied', reason: 'rate_limited' })]);
  });
});
