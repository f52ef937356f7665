import type { AddressInfo } from 'node:net';
import { createGateway, type Handler } from '../../lib/gateway/server';
import { logger } from '../../lib/log';
import { InFlightLimit } from '../../lib/gateway/in-flight';
import path from 'node:path';
import { readServiceMap, type ServiceMap } from '../../lib/gateway/service-map';
import { readBudgetRouteKeys } from '../../functions/console/all-routes';
import { loadConfig } from '../../lib/config';
import { readWorkMs } from '../../lib/http/middlewares/admission';

// In-flight requests per function on the container gateway (issue 28), capped at the function's
// reserved concurrency the way Lambda caps its instances: the others wait their turn within the
// start budget, then answer 503 `overloaded` with Retry-After (HTTP) or Lambda's throttle (invoke).

const CAP = 2;
const BUDGET_MS = 400;
const HOLD_MS = 1000; // each request of the burst holds its turn this long (longer than the budget)

describe('InFlightLimit', () => {
  it(`cap ${CAP}: the third request waits, gets the turn a release frees, in arrival order`, async () => {
    const limit = new InFlightLimit(CAP, 5000);
    const first = (await limit.acquire())!;
    const second = (await limit.acquire())!;
    const order: string[] = [];
    const third = limit.acquire().then((r) => (order.push('third'), r));
    const fourth = limit.acquire().then((r) => (order.push('fourth'), r));
    expect(limit.stats()).toMatchObject({ running: 2, waiting: 2 });
    first();
    (await third)!();
    second();
    (await fourth)!();
    expect(order).toEqual(['third', 'fourth']);
    expect(limit.stats()).toMatchObject({ running: 0, waiting: 0, admitted: 4, refused: 0 });
  });

  it(`a request that cannot get a turn within the budget (${BUDGET_MS} ms) is refused when the budget runs out`, async () => {
    const limit = new InFlightLimit(1, BUDGET_MS);
    const held = (await limit.acquire())!;
    const t0 = Date.now();
    expect(await limit.acquire()).toBeUndefined();
    const waited = Date.now() - t0;
    expect(waited).toBeGreaterThanOrEqual(BUDGET_MS - 10);
    expect(waited).toBeLessThan(BUDGET_MS + 200);
    held();
    expect(limit.stats()).toMatchObject({ running: 0, waiting: 0, refused: 1 });
  });

  it('once run times are known, a request whose queue already takes longer than its budget is refused at once', async () => {
    let now = 0;
    const limit = new InFlightLimit(1, BUDGET_MS, () => now);
    const a = (await limit.acquire())!;
    now += 300;
    a(); // one run of 300 ms known
    const b = (await limit.acquire())!;
    const queued = limit.acquire(); // waits: 300 ms expected, within 400
    const late = await limit.acquire(); // two rounds ahead: 600 ms > 400: at once
    expect(late).toBeUndefined();
    b();
    (await queued)!();
  });
});

describe('InFlightLimit: a read with a deadline for its work', () => {
  // fake clock; one slot; 20 runs of 100 ms, then one of 1,200 ms: the longest recent run is what a
  // turn must leave time for (their 90th percentile, 100 ms, let reads run past their budget)
  const setup = async (startBudgetMs = 2000) => {
    const clock = { now: 0 };
    const limit = new InFlightLimit(1, startBudgetMs, () => clock.now);
    for (const ms of [...Array<number>(20).fill(100), 1200]) {
      const r = (await limit.acquire())!;
      clock.now += ms;
      r();
    }
    return { clock, limit };
  };

  it('the burst of bench/load: a read whose turn comes 1,900 ms after its arrival (within the start budget) is refused then, since a run as long as the longest recent one (1,200 ms) would end past its 3 s deadline; the next in line, a change (no deadline), gets the turn', async () => {
    const { clock, limit } = await setup(5000); // a start budget that lets both wait two rounds
    const running = (await limit.acquire())!;
    const arrived = clock.now - 1500; // both arrived 1.5 s before the running one started
    const read = limit.acquire(arrived, arrived + 3000);
    const change = limit.acquire(arrived);
    clock.now += 400;
    running(); // the turn comes at 1,900 ms: 1,900 + 1,200 > 3,000
    expect(await read).toBeUndefined();
    const changeTurn = await change;
    expect(changeTurn).toBeInstanceOf(Function);
    changeTurn!();
    expect(limit.stats()).toMatchObject({ running: 0, waiting: 0, refused: 1 });
  });

  it('a read whose turn comes 1,500 ms after its arrival still gets it (1,500 + 1,200 <= 3,000)', async () => {
    const { clock, limit } = await setup();
    const running = (await limit.acquire())!;
    const arrived = clock.now - 1100;
    const read = limit.acquire(arrived, arrived + 3000);
    clock.now += 400;
    running();
    const turn = await read;
    expect(turn).toBeInstanceOf(Function);
    turn!();
    expect(limit.stats()).toMatchObject({ running: 0, refused: 0 });
  });

  it('refused at once on arrival when the queue ahead and the longest recent run end past its deadline; a change with the same queue waits', async () => {
    const { clock, limit } = await setup();
    const running = (await limit.acquire())!;
    const arrived = clock.now;
    // one round ahead (the moving average, 320 ms) + the longest run (1,200 ms) > a 1,500 ms deadline: no wait at all
    expect(await limit.acquire(arrived, arrived + 1500)).toBeUndefined();
    const change = limit.acquire(arrived);
    expect(limit.stats()).toMatchObject({ waiting: 1, refused: 1 });
    clock.now += 300;
    running();
    (await change)!();
  });
});

describe("InFlightLimit: a burst's start (a run under way slower than every finished one)", () => {
  // two slots: one run starts and is still going; the other slot serves runs of 10 ms meanwhile. At
  // 890 ms a read arrives while both slots are busy; its turn comes at 900 ms. On the finished runs
  // alone (10 ms each) it would be given the turn, and could then run as long as the one under way.
  const setup = async () => {
    const clock = { now: 0 };
    const limit = new InFlightLimit(2, 2000, () => clock.now);
    const slow = (await limit.acquire())!;
    while (clock.now < 890) {
      const r = (await limit.acquire())!;
      clock.now += 10;
      r();
    }
    const last = (await limit.acquire())!; // 890 to 900 ms
    return { clock, limit, slow, last };
  };

  it('a read whose turn comes while a run has lasted 900 ms, with 850 ms left then, is refused (900 > 850); a change gets the turn', async () => {
    const { clock, limit, slow, last } = await setup();
    const read = limit.acquire(clock.now, clock.now + 10 + 850);
    const change = limit.acquire(clock.now);
    clock.now += 10;
    last();
    expect(await read).toBeUndefined();
    const turn = (await change)!;
    expect(turn).toBeInstanceOf(Function);
    turn();
    slow();
    expect(limit.stats()).toMatchObject({ running: 0, waiting: 0, refused: 1 });
  });

  it('the same read with 950 ms left at its turn gets it', async () => {
    const { clock, limit, slow, last } = await setup();
    const read = limit.acquire(clock.now, clock.now + 10 + 950);
    clock.now += 10;
    last();
    const turn = await read;
    expect(turn).toBeInstanceOf(Function);
    turn!();
    slow();
    expect(limit.stats()).toMatchObject({ running: 0, refused: 0 });
  });
});

describe('the console reads the gateways hold to Concurrency:ReadBudget', () => {
  const keys = readBudgetRouteKeys();
  const ROOT = path.resolve(__dirname, '../..');
  const served = new Set(readServiceMap(path.join(ROOT, 'serverless.yml'), () => 'rate(5 minutes)').functions.flatMap((f) => f.routes.map((r) => `${r.method} ${r.path}`)));

  it('are reads of the route table, by the route key the gateways match (a route of serverless.yml)', () => {
    expect(keys).toEqual(expect.arrayContaining(['GET /api/computers/{id}', 'GET /api/users', 'GET /api/audit']));
    for (const k of keys) expect([k, served.has(k)]).toEqual([k, true]);
  });

  it("must have done their work two thirds of the budget after they arrived (readWorkMs: 2 s of the default 3), the pipeline's deadline: a read whose turn comes 1,900 ms after it arrived, with runs of 200 ms, is refused (it would have been given the turn against the 3 s budget, then refused by its function)", async () => {
    const workMs = readWorkMs(loadConfig({}).config);
    expect(workMs).toBe(2000);
    const clock = { now: 0 };
    const limit = new InFlightLimit(1, 2000, () => clock.now);
    for (let i = 0; i < 5; i++) {
      const r = (await limit.acquire())!;
      clock.now += 200;
      r();
    }
    const running = (await limit.acquire())!;
    const arrived = clock.now - 1700;
    const read = limit.acquire(arrived, arrived + workMs);
    const change = limit.acquire(arrived);
    clock.now += 200;
    running(); // the read's turn at 1,900 ms: 1,900 + 200 > 2,000
    expect(await read).toBeUndefined();
    (await change)!();
    expect(limit.stats()).toMatchObject({ running: 0, waiting: 0, refused: 1 });
  });

  it('leave out the changes and the reads slow by nature (longRead)', () => {
    for (const k of ['POST /api/computers/{id}/laps', 'GET /api/audit/verify', 'GET /api/diagnostics', 'GET /api/exports/users', 'GET /api/fleet/v1/status', 'GET /health/ready']) expect(keys).not.toContain(k);
  });
});

describe('the reserved concurrency a container reads from the service files', () => {
  const ROOT = path.resolve(__dirname, '../..');
  it('resolves ${self:custom.concurrency.*} for every function of the console, the password service and the fleet plane', () => {
    const console_ = readServiceMap(path.join(ROOT, 'serverless.yml'), () => 'rate(5 minutes)');
    const byName = Object.fromEntries(console_.functions.map((f) => [f.name, f.reservedConcurrency]));
    expect(byName).toMatchObject({ consoleComputers: 10, consoleUsers: 10, consoleAuth: 10, consoleApprovals: 5, approvalsExpiry: 1 });
    for (const file of ['serverless.yml', 'serverless.password-service.yml', 'serverless.fleet.yml']) {
      const map = readServiceMap(path.join(ROOT, file), () => 'rate(5 minutes)');
      expect([file, map.functions.filter((f) => !f.reservedConcurrency).map((f) => f.name)]).toEqual([file, []]);
    }
  });
});

describe('the gateway caps a function at its reserved concurrency', () => {
  const map: ServiceMap = {
    service: 'hdc-console',
    functions: [
      { name: 'capped', module: 'm', exportName: 'capped', routes: [{ method: 'GET', path: '/api/slow' }], timeout: 29, reservedConcurrency: CAP },
      { name: 'free', module: 'm', exportName: 'free', routes: [{ method: 'GET', path: '/api/free' }], timeout: 29 },
      { name: 'service', module: 'm', exportName: 'capped', routes: [], timeout: 29, reservedConcurrency: 1 },
    ],
  };
  let running = 0;
  let most = 0;
  const slow: Handler = async () => {
    running++;
    most = Math.max(most, running);
    await new Promise((r) => setTimeout(r, HOLD_MS));
    running--;
    return { statusCode: 200, body: '{"ok":true}' };
  };
  const handlers: Record<string, Handler> = { capped: slow, free: async () => ({ statusCode: 200, body: '{"ok":true}' }) };
  const refusals: Array<{ function: string; reason: string }> = [];
  let url = '';
  let server: ReturnType<typeof createGateway>;
  beforeAll(async () => {
    server = createGateway({ map, load: async (_m, e) => handlers[e], http: true, invoke: true, startBudgetMs: BUDGET_MS, onOverload: (r) => refusals.push(r) });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  it(`a burst of 6 to a function of reserved concurrency ${CAP}, each holding ${HOLD_MS} ms, start budget ${BUDGET_MS} ms: ${CAP} served, 4 refused 503 overloaded with Retry-After within the budget; never more than ${CAP} running; another function unaffected`, async () => {
    const warned = jest.spyOn(logger, 'warn');
    const t0 = Date.now();
    const burst = await Promise.all(
      Array.from({ length: 6 }, async () => {
        const res = await fetch(`${url}/api/slow`);
        return { status: res.status, retryAfter: res.headers.get('retry-after'), correlationId: res.headers.get('x-correlation-id'), body: await res.json(), ms: Date.now() - t0 };
      }).concat([fetch(`${url}/api/free`).then(async (res) => ({ status: res.status, retryAfter: null, correlationId: null, body: await res.json(), ms: Date.now() - t0, free: true }) as any)]),
    );
    const served = burst.filter((r) => r.status === 200 && !(r as any).free);
    const refused = burst.filter((r) => r.status === 503);
    expect(served).toHaveLength(CAP);
    expect(refused).toHaveLength(4);
    for (const r of refused) {
      expect(r.body).toEqual({ code: 'overloaded', retryAfterSeconds: 1 });
      expect(r.retryAfter).toBe('1');
      // an answer of the API like any other: its own correlation id (the OpenAPI documents require it)
      expect(r.correlationId).toMatch(/^[0-9a-f-]{36}$/);
      expect(r.ms).toBeLessThan(BUDGET_MS + 300); // answered within its budget, not after a turn
    }
    expect(burst.find((r) => (r as any).free)).toMatchObject({ status: 200 });
    expect(most).toBe(CAP);
    expect(refusals).toHaveLength(4);
    expect(refusals[0]).toMatchObject({ function: 'capped', reason: 'in_flight:capped', route: 'GET /api/slow' });
    // logged once, by onOverload (the console's recordOverload), which gets the gateway's counts
    expect(warned.mock.calls.filter(([m]) => m === 'request refused: overloaded')).toHaveLength(0);
    warned.mockRestore();
    expect(refusals[0]).toMatchObject({ inFlight: { running: CAP, limit: CAP } });
  });

  it('the invoke API answers a throttled invoke as Lambda does (429 TooManyRequestsException)', async () => {
    const invoke = () => fetch(`${url}/2015-03-31/functions/hdc-console-service/invocations`, { method: 'POST', body: '{}' });
    const [a, b] = await Promise.all([invoke(), invoke()]);
    const statuses = [a.status, b.status].sort();
    expect(statuses).toEqual([200, 429]);
    const throttled = a.status === 429 ? a : b;
    expect(throttled.headers.get('x-amzn-errortype')).toBe('TooManyRequestsException');
  });
});
