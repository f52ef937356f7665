import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { AuditChain } from '../../lib/audit';
import { loadConfig } from '../../lib/config';
import { overloaded } from '../../lib/errors';
import { createHttpHandler } from '../../lib/http/console';
import { forgetOverloadsForTests, recordOverload } from '../../lib/http/overload';
import type { Route } from '../../lib/http/route';
import { z } from 'zod';
import type { ConsoleRuntime } from '../../lib/runtime';
import { memoryDynamoStore } from '../support/memory-store';
import { requestDeadline } from '../../lib/request-scope';
import { logger } from '../../lib/log';
import { resetRuntimeForTests } from '../../lib/runtime';
import { recordConsoleOverload } from '../../lib/http/console-overload';
import { logOverload } from '../../lib/http/overload';

// Bounded concurrency (issue 28): a request that reaches the console's pipeline later than the
// start budget (Concurrency:StartBudget, 2 s by default) after it arrived at the gateway is
// refused 503 `overloaded` with Retry-After before any work; so is one the directory cannot give
// a connection. Each reason is audited once a minute (service.overloaded), not once per request,
// across instances (a store window decides).
const BUDGET_S = 2;
let ran = 0;
// routes of this test only (cast: their declared answers do not matter here)
const work = {
  method: 'GET',
  path: '/api/work',
  summary: 'test',
  access: 'anonymous',
  responses: { 200: z.object({ ok: z.boolean() }) },
  async handle() {
    ran++;
    return { body: { ok: true } };
  },
} as unknown as Route;
const noSlot = {
  method: 'GET',
  path: '/api/no-slot',
  summary: 'test',
  access: 'anonymous',
  responses: { 200: z.object({ ok: z.boolean() }) },
  async handle() {
    throw overloaded('directory_connections', 2);
  },
} as unknown as Route;

// a read that outlasts the invocation's remaining time
const slow = (method: 'GET') =>
  ({
    method,
    path: '/api/slow',
    summary: 'test',
    access: 'anonymous',
    responses: { 200: z.object({ ok: z.boolean() }) },
    async handle() {
      ran++;
      await new Promise((r) => setTimeout(r, 300));
      return { body: { ok: true } };
    },
  }) as unknown as Route;

/** The console on an instance started at `instanceStartedAt` (by default long before any request: a warm one). */
function consoleOn(store: ReturnType<typeof memoryDynamoStore>, instanceStartedAt = 0) {
  const config = loadConfig({ Concurrency__StartBudget: String(BUDGET_S) }).config;
  const rt = { config, store, audit: new AuditChain(store, 'console') } as unknown as ConsoleRuntime;
  return createHttpHandler([work, noSlot] as never, () => rt, { instanceStartedAt });
}
const arrivedAgo = (ms: number, path = '/api/work') =>
  ({ rawPath: path, headers: {}, requestContext: { http: { method: 'GET', sourceIp: '127.0.0.1' }, timeEpoch: Date.now() - ms } }) as unknown as APIGatewayProxyEventV2;
const overloadRows = async (store: ReturnType<typeof memoryDynamoStore>) => {
  const chain = new AuditChain(store, 'console');
  const { headSeq } = await chain.extent();
  const rows = [];
  for (let seq = 1; seq <= headSeq; seq++) rows.push(await chain.row(seq));
  return rows.filter((r) => r?.event === 'service.overloaded');
};

let write: jest.SpyInstance;
beforeEach(() => {
  forgetOverloadsForTests();
  ran = 0;
  write = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
});
afterEach(() => write.mockRestore());

describe(`the start budget (${BUDGET_S} s)`, () => {
  it(`a request that arrived ${BUDGET_S * 1000 - 500} ms ago is served`, async () => {
    const res = await consoleOn(memoryDynamoStore('admit'))(arrivedAgo(BUDGET_S * 1000 - 500));
    expect(res.statusCode).toBe(200);
    expect(ran).toBe(1);
  });

  it(`a burst of 5 requests that arrived ${BUDGET_S * 1000 + 100} ms ago: each 503 overloaded with Retry-After ${BUDGET_S}, the route never runs, one audit row for the burst`, async () => {
    const store = memoryDynamoStore('burst');
    const handler = consoleOn(store);
    const answers = await Promise.all(Array.from({ length: 5 }, () => handler(arrivedAgo(BUDGET_S * 1000 + 100))));
    for (const res of answers) {
      expect(res.statusCode).toBe(503);
      expect(JSON.parse(res.body!)).toEqual({ code: 'overloaded', retryAfterSeconds: BUDGET_S });
      expect(res.headers!['retry-after']).toBe(String(BUDGET_S));
    }
    expect(ran).toBe(0);
    const rows = await overloadRows(store);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ event: 'service.overloaded', outcome: 'denied', reason: 'start_budget', actor: { name: 'console', provider: 'system' }, details: { retryAfterSeconds: BUDGET_S } });
  });

  it(`a cold start: a request that arrived ${BUDGET_S * 1000 + 100} ms ago, before the instance made for it started (1 s ago), is served and no refusal is audited`, async () => {
    const store = memoryDynamoStore('cold');
    const res = await consoleOn(store, Date.now() - 1000)(arrivedAgo(BUDGET_S * 1000 + 100));
    expect(res.statusCode).toBe(200);
    expect(ran).toBe(1);
    expect(await overloadRows(store)).toEqual([]);
    // the same wait on an instance that was already up: a queue, refused
    const warm = await consoleOn(store, Date.now() - BUDGET_S * 1000 - 200)(arrivedAgo(BUDGET_S * 1000 + 100));
    expect([warm.statusCode, JSON.parse(warm.body!).code, ran]).toEqual([503, 'overloaded', 1]);
  });

  it('a request without an arrival time (a direct invoke) is never refused by it', async () => {
    const event = { rawPath: '/api/work', headers: {}, requestContext: { http: { method: 'GET', sourceIp: '127.0.0.1' } } } as unknown as APIGatewayProxyEventV2;
    expect((await consoleOn(memoryDynamoStore('no-epoch'))(event)).statusCode).toBe(200);
  });
});

describe('a refusal from further in (no directory connection within the wait)', () => {
  it('answers 503 overloaded with its Retry-After and is audited under its own reason', async () => {
    const store = memoryDynamoStore('no-slot');
    const res = await consoleOn(store)(arrivedAgo(0, '/api/no-slot'));
    expect([res.statusCode, JSON.parse(res.body!), res.headers!['retry-after']]).toEqual([503, { code: 'overloaded', retryAfterSeconds: 2 }, '2']);
    expect((await overloadRows(store)).map((r) => r!.reason)).toEqual(['directory_connections']);
  });
});

describe("a request still running when the invocation's time is up (middy's early timeout)", () => {
  // 50 ms left when the request starts: the route needs 300 ms
  const context = () => ({ getRemainingTimeInMillis: () => 50, functionName: 'consoleSlow' }) as never;
  const event = (method: string) => ({ rawPath: '/api/slow', headers: {}, requestContext: { http: { method, sourceIp: '127.0.0.1' }, timeEpoch: Date.now() } }) as unknown as APIGatewayProxyEventV2;
  const on = (method: 'GET', store: ReturnType<typeof memoryDynamoStore>) => {
    const config = loadConfig({ Concurrency__StartBudget: String(BUDGET_S) }).config;
    const rt = { config, store, audit: new AuditChain(store, 'console') } as unknown as ConsoleRuntime;
    return createHttpHandler([slow(method)] as never, () => rt);
  };

  it('a read answers 503 overloaded (reason deadline) with Retry-After, audited once, never 500', async () => {
    const store = memoryDynamoStore('deadline');
    const res = await on('GET', store)(event('GET'), context());
    expect([res.statusCode, JSON.parse(res.body!), res.headers!['retry-after']]).toEqual([503, { code: 'overloaded', retryAfterSeconds: BUDGET_S }, String(BUDGET_S)]);
    expect((await overloadRows(store)).map((r) => [r!.reason, r!.details?.function])).toEqual([['deadline', 'consoleSlow']]);
  });

  it('any other fault of a read keeps the plain 500 internal_error (only the timeout is an overload)', async () => {
    const store = memoryDynamoStore('deadline-other');
    const config = loadConfig({ Concurrency__StartBudget: String(BUDGET_S) }).config;
    const rt = { config, store, audit: new AuditChain(store, 'console') } as unknown as ConsoleRuntime;
    const failing = { ...(slow('GET') as object), handle: async () => Promise.reject(Object.assign(new Error('boom'), { name: 'TimeoutError' })) } as unknown as Route;
    const res = await createHttpHandler([failing] as never, () => rt)(event('GET'), { getRemainingTimeInMillis: () => 60_000 } as never);
    expect([res.statusCode, JSON.parse(res.body!).code, res.headers!['retry-after']]).toEqual([500, 'internal_error', undefined]);
    expect(await overloadRows(store)).toEqual([]);
  });
});

describe('a gateway refusal (issue 28: it was logged twice, by the gateway and by recordOverload)', () => {
  it("is logged once, with the gateway's in-flight counts; its audit row carries no counts", async () => {
    forgetOverloadsForTests();
    const store = memoryDynamoStore('gateway-refusal');
    const audit = new AuditChain(store, 'console');
    const warned = jest.spyOn(logger, 'warn');
    await recordOverload({ store, audit }, { reason: 'in_flight:consoleComputers', retryAfterSeconds: 2, function: 'consoleComputers', inFlight: { running: 4, waiting: 9, limit: 4 } });
    const lines = warned.mock.calls.filter(([m]) => m === 'request refused: overloaded');
    warned.mockRestore();
    expect(lines).toHaveLength(1);
    expect(lines[0][1]).toMatchObject({ reason: 'in_flight:consoleComputers', running: 4, waiting: 9, limit: 4 });
    expect(lines[0][1]).not.toHaveProperty('inFlight');
    const [row] = await overloadRows(store);
    expect(row!.details).toMatchObject({ function: 'consoleComputers', refusedByThisInstance: 1 });
    expect(JSON.stringify(row!.details)).not.toMatch(/running|waiting|limit/);
    forgetOverloadsForTests();
  });
});

describe('a gateway refusal without the console runtime', () => {
  it('the fleet gateway (no recorder) and a console whose configuration does not load: logged once each, never dropped', () => {
    const warned = jest.spyOn(logger, 'warn');
    // a configuration the console refuses to load: its runtime cannot be built
    resetRuntimeForTests();
    process.env.Concurrency__ReadBudget = 'soon';
    logOverload({ reason: 'in_flight:fleetNodes', retryAfterSeconds: 2, function: 'fleetNodes', inFlight: { running: 3, waiting: 0, limit: 3 } });
    recordConsoleOverload({ reason: 'in_flight:consoleComputers', retryAfterSeconds: 2, function: 'consoleComputers' });
    delete process.env.Concurrency__ReadBudget;
    resetRuntimeForTests();
    const lines = warned.mock.calls.filter(([m]) => m === 'request refused: overloaded').map(([, f]) => f as Record<string, unknown>);
    warned.mockRestore();
    expect(lines.map((f) => f.reason)).toEqual(['in_flight:fleetNodes', 'in_flight:consoleComputers']);
    expect(lines[0]).toMatchObject({ running: 3, waiting: 0, limit: 3 });
  });
});

describe('once a minute per reason, across instances', () => {
  it('two instances (separate memories, one store) refusing at 0 s, 30 s and 59.9 s write one row; at 60.1 s a second; another reason its own at once', async () => {
    const store = memoryDynamoStore('minute');
    const audit = new AuditChain(store, 'console');
    let t = Date.parse('2026-11-27T10:00:00Z');
    const now = () => t;
    const refuse = (reason = 'start_budget') => recordOverload({ store, audit }, { reason, retryAfterSeconds: 2 }, now);
    await refuse();
    forgetOverloadsForTests(); // the second instance: nothing remembered locally, the store decides
    t += 30_000;
    // it reads the window and writes nothing (a write would wait for the writer's lock the
    // overload keeps busy: issue 28, refusals answered past their budget on serverless-offline)
    const writes = ['put', 'update', 'delete', 'transactWrite', 'batchWrite'] as const;
    const spies = writes.map((w) => jest.spyOn(store, w));
    await refuse();
    expect(spies.map((s) => s.mock.calls.length)).toEqual(writes.map(() => 0));
    spies.forEach((s) => s.mockRestore());
    forgetOverloadsForTests();
    t += 29_900;
    await refuse();
    expect((await overloadRows(store)).length).toBe(1);
    await refuse('directory_connections');
    expect((await overloadRows(store)).length).toBe(2);
    forgetOverloadsForTests();
    t += 200; // 60.1 s after the first row
    await refuse();
    expect((await overloadRows(store)).map((r) => r!.reason)).toEqual(['start_budget', 'directory_connections', 'start_budget']);
  });
});

describe('a read\'s answer budget (Concurrency:ReadBudget): the deadline the pipeline hands to the directory', () => {
  const READ_S = 3;
  // the route answers the deadline its directory reads would get (lib/request-scope)
  // (a bearer route: a POST of this test passes without a browser's CSRF token)
  const seen = (method: string, longRead = false) =>
    ({ method, path: '/api/deadline', longRead, summary: 'test', access: 'bearer', responses: { 200: z.object({}) }, handle: async () => ({ body: { deadline: requestDeadline() ?? null } }) }) as unknown as Route;
  const ask = async (route: Route, method: string, timeEpoch?: number) => {
    const config = loadConfig({ Concurrency__StartBudget: String(BUDGET_S), Concurrency__ReadBudget: String(READ_S) }).config;
    const rt = { config, store: memoryDynamoStore('read-budget'), audit: undefined } as unknown as ConsoleRuntime;
    const event = { rawPath: '/api/deadline', headers: {}, requestContext: { http: { method, sourceIp: '127.0.0.1' }, ...(timeEpoch ? { timeEpoch } : {}) } } as unknown as APIGatewayProxyEventV2;
    const res = await createHttpHandler([route] as never, () => rt)(event);
    return JSON.parse(res.body!).deadline;
  };

  it(`a GET that arrived 1 s ago: its directory reads end 2 s after its arrival, two thirds of its ${READ_S} s (the rest is kept to answer a refusal; Retry-After: the start budget)`, async () => {
    const arrived = Date.now() - 1000;
    expect(await ask(seen('GET'), 'GET', arrived)).toEqual({ at: arrived + 2000, retryAfterSeconds: BUDGET_S });
  });

  it('a GET without an arrival time (a direct invoke): from its start', async () => {
    const before = Date.now();
    const d = await ask(seen('GET'), 'GET');
    expect(d.at).toBeGreaterThanOrEqual(before + 2000);
    expect(d.at).toBeLessThan(Date.now() + 2000 + 1);
  });

  it('a change (POST) gets none: cut short, its outcome would be unknown', async () => {
    expect(await ask(seen('POST'), 'POST', Date.now())).toBeNull();
  });

  it('a read slow by nature (longRead: diagnostics, exports, the audit walk) gets none', async () => {
    expect(await ask(seen('GET', true), 'GET', Date.now())).toBeNull();
  });
});
