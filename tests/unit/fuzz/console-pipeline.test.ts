import { randomBytes, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { ZodError, type z } from 'zod';
import { consoleRoutes } from '../../../functions/console/all-routes';
import { AuditChain } from '../../../lib/audit';
import { createSession, SESSION_COOKIE } from '../../../lib/auth/sessions';
import { loadConfig } from '../../../lib/config';
import { seal } from '../../../lib/crypto/seal';
import { unavailable } from '../../../lib/errors';
import { createHttpHandler } from '../../../lib/http/console';
import { validationError } from '../../../lib/http/middlewares/validate';
import type { Route } from '../../../lib/http/route';
import { logger } from '../../../lib/log';
import type { ConsoleRuntime } from '../../../lib/runtime';
import type { Directory } from '../../../lib/directory';
import { readSettings, writeSettings, type InstanceSettings } from '../../../lib/setup/settings';
import { nowSeconds } from '../../../lib/store';
import { memoryDynamoStore } from '../../support/memory-store';
import { httpEvent, type HttpEventOptions } from '../../support/http-event';
import { zodArbitrary } from '../../support/zod-arbitrary';

// The console's real pipeline and handlers, in process: a table in memory, a signed-in Super
// administrator with a fresh step-up, and a directory that holds nothing (reads find nothing, the rest answers 503). Any
// body, query or path through every route ends in an answer the route meant, never in a 500;
// and every route schema either accepts a value or refuses it as a 400 with field errors.

// the API routes (the health probes have their own lean chain)
const routes = (Object.values(consoleRoutes).flat() as unknown[]).filter((r): r is Route<any, any, any> => !!r && typeof r === 'object' && 'access' in r);
const key = randomBytes(32);
const store = memoryDynamoStore('console-fuzz');
const { config } = loadConfig({ Helpdesk__Enabled: 'true' });
const BASE_DN = 'DC=corp,DC=example,DC=test';
/** A directory that holds nothing (every read finds nothing; anything else is unavailable). */
const emptyDirectory: Directory = new Proxy(
  {
    baseDn: BASE_DN,
    readCreds: async () => ({ user: 'svc-read', password: 'x' }),
    verifyCredentials: async () => false,
    findUserDn: async () => undefined,
    principalFacts: async () => undefined,
    dnOfGuid: async () => undefined,
    filterOuDn: async () => undefined,
    resolvePrincipal: async () => undefined,
    readObject: async () => undefined,
    readGroup: async () => undefined,
    readFactsByDn: async () => undefined,
    readAttributes: async () => undefined,
    readableAttributeNames: async () => new Set<string>(),
    parentGroupSids: async () => [],
    withTokenGroups: async (facts: unknown[]) => facts,
    search: async () => ({ entries: [], incomplete: false }),
    schemaAttributes: async () => [],
    accountSids: async () => new Set<string>(),
    readLaps: async () => undefined,
  } as Record<string | symbol, unknown>,
  {
    get: (t, k) =>
      k in t || typeof k === 'symbol' || k === 'then'
        ? t[k]
        : async () => {
            throw unavailable('directory_unavailable');
          },
  },
) as unknown as Directory;
const rt: ConsoleRuntime = {
  config,
  store,
  audit: new AuditChain(store, 'console', { key: async () => key, lookups: true }),
  masterKey: async () => key,
  settings: async () => (await readSettings(store))?.settings,
  directory: async () => emptyDirectory,
  writeCreds: async () => {
    throw unavailable('directory_unavailable');
  },
  schemaReady: async () => {},
  settingsAndDirectory: async () => {
    const settings = (await readSettings(store))?.settings;
    return settings ? { settings, directory: emptyDirectory } : {};
  },
};
const handler = createHttpHandler(routes, () => rt);
const OPERATOR_GUID = randomUUID();
let cookie = '';
let csrf = '';

const event = (method: string, rawPath: string, opts: HttpEventOptions = {}) => httpEvent(method, rawPath, { sourceIp: '192.0.2.9', ...opts });

let lastError: unknown;
const errors: unknown[] = [];
async function call(e: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> {
  lastError = undefined;
  const r = await handler(e);
  if (r.statusCode === 500) errors.push({ path: e.rawPath, method: e.requestContext.http.method, body: e.body, query: e.queryStringParameters, logged: lastError });
  return r;
}

beforeAll(async () => {
  jest.spyOn(logger, 'error').mockImplementation((...a: unknown[]) => void (lastError = a));
  jest.spyOn(logger, 'warn').mockImplementation(() => undefined);
  jest.spyOn(logger, 'info').mockImplementation(() => undefined);
  jest.spyOn(process.stdout, 'write').mockImplementation(() => true); // the audit stream
  const settings: InstanceSettings = {
    domain: 'corp.example.test',
    baseDn: 'DC=corp,DC=example,DC=test',
    dcs: [{ name: 'dc1', url: 'ldaps://127.0.0.1:636' }],
    caPem: '',
    readAccount: { user: 'svc-read', sealedPassword: seal(key, 'x', 'tech-account:read') },
    writeAccount: { user: 'svc-write', sealedPassword: seal(key, 'x', 'tech-account:write') },
    managedOus: [{ dn: 'OU=Managed,DC=corp,DC=example,DC=test', guid: randomUUID() }],
    tierOus: [],
    protectedGroups: [],
    superAdministrators: [OPERATOR_GUID],
    stepUpMode: 'none',
    configuredAt: new Date().toISOString(),
  } as unknown as InstanceSettings;
  expect(await writeSettings(store, settings, 0)).toBe(true);
  const operator = { guid: OPERATOR_GUID, dn: 'CN=op,OU=Ops,DC=corp,DC=example,DC=test', username: 'op', sid: 'S-1-5-21-1-2-3-1105', groupSids: [], provider: 'ad' as const, factsAt: Date.now() + 365 * 86400_000 };
  const session = await createSession(store, { idleSeconds: 3600, absoluteSeconds: 36000 }, operator, { stepUpAt: nowSeconds() + 86400, stepUpProof: 'authenticator' });
  cookie = `${SESSION_COOKIE}=${session.id}`;
  csrf = session.csrfToken;
});
afterAll(() => jest.restoreAllMocks());
afterEach(() => {
  expect(errors).toEqual([]);
  errors.length = 0;
});

const FIELDS = [
  'ticket', 'reason', 'confirm', 'username', 'password', 'code', 'proof', 'name', 'permissions', 'roleId', 'scopeOus', 'assignees', 'id', 'version', 'events', 'url', 'secret', 'enabled',
  'attributes', 'description', 'add', 'remove', 'enabled', 'targetOu', 'newName', 'action', 'params', 'kind', 'approvers', 'ticketRequired', 'consoleUrl', 'mode', 'stepUpMode', 'dcs', 'caPem', 'guid', 'cursor', '__proto__',
];
const plausible = fc.oneof(
  fc.constantFrom(true, false, 0, 1, -1, 1e309, '', 'x', 'INC-1', 'users.read', 'super-administrator', 'approval_requested', 'https://hooks.example.test/x', 'ldaps://dc1:636', 'OU=Managed,DC=corp,DC=example,DC=test', '*)(cn=*', '\\', '\u0000', '\ud800', 'x'.repeat(5000), randomUUID(), '__proto__'),
  fc.string(),
  fc.jsonValue({ maxDepth: 3 }),
  fc.constant(null),
);
const bodyArb = fc.oneof(
  fc.dictionary(fc.constantFrom(...FIELDS), plausible, { maxKeys: 6 }).map((o) => JSON.stringify(o)),
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
  fc.string({ maxLength: 200 }),
  fc.constantFrom('', '{', '[]', 'null', '"x"', '{"__proto__":{"superAdministrator":true}}'),
);
const paramArb = fc.oneof(fc.constantFrom('a%2Fb', '%E0%A4%A', '..', '%00', randomUUID(), 'x'.repeat(300), 'custom-role', 'super-administrator'), fc.string({ maxLength: 40 }).map(encodeURIComponent));
const queryArb = fc.option(
  fc.dictionary(
    fc.constantFrom('q', 'ou', 'cursor', 'limit', 'from', 'to', 'event', 'outcome', 'target', 'actor', 'state', 'format', 'x'),
    fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom('1', '-1', '1e9', 'NaN', '2026-01-01', 'v1.a.b.c', 'success', 'csv')),
  ),
  { nil: undefined },
);

/** A route with a body for it: shaped by its schema (so it reaches the handler), that shape with one field changed, or anything. */
const routeAndBody = fc.constantFrom(...routes).chain((route) => {
  const shaped = route.body ? zodArbitrary(route.body) : fc.constant({});
  const changed = fc.tuple(shaped, fc.constantFrom(...FIELDS), plausible).map(([b, k, v]) => (b && typeof b === 'object' && !Array.isArray(b) ? { ...b, [k]: v } : b));
  return fc.tuple(fc.constant(route), fc.oneof({ weight: 3, arbitrary: shaped.map((b) => JSON.stringify(b)) }, { weight: 2, arbitrary: changed.map((b) => JSON.stringify(b)) }, { weight: 2, arbitrary: bodyArb }));
});

describe('fuzz: the console pipeline and handlers', () => {
  it('answers every request to every route, signed in or not, without a 500', async () => {
    const seen = new Set<number>();
    await fc.assert(
      fc.asyncProperty(routeAndBody, paramArb, queryArb, fc.constantFrom('operator', 'operator', 'operator', 'anonymous', 'bad-csrf'), fc.boolean(), async ([route, body], param, query, who, b64) => {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (who !== 'anonymous') {
          headers.cookie = cookie;
          headers['x-csrf-token'] = who === 'operator' ? csrf : 'nope';
        }
        const p = route.path.replace(/\{\w+\}/g, param);
        // JSON.stringify of a schema's absent body (an optional DELETE body) is undefined: sent as no body
        const r = await call(event(route.method, p, { headers, query, body: b64 && body !== undefined ? Buffer.from(body).toString('base64') : body, isBase64Encoded: b64 }));
        seen.add(r.statusCode!);
        expect(r.statusCode).toBeLessThan(600);
        if (r.statusCode! >= 400) expect(typeof JSON.parse(r.body!).code).toBe('string');
      }),
      { numRuns: 200 },
    );
    // inputs reach the handlers and their validation, not only the pipeline's refusals
    expect([...seen]).toEqual(expect.arrayContaining([200, 400, 401, 404]));
  });

  it('every route schema accepts a value or refuses it as a 400 naming fields (never a throw)', () => {
    const schemas = routes.flatMap((r) => [r.body, r.query, r.params].filter((s): s is z.ZodType => !!s));
    fc.assert(
      fc.property(fc.constantFrom(...schemas).chain((schema) => fc.tuple(fc.constant(schema), fc.oneof(zodArbitrary(schema), fc.dictionary(fc.constantFrom(...FIELDS), plausible, { maxKeys: 6 }), fc.jsonValue({ maxDepth: 4 })))), ([schema, value]) => {
        const r = schema.safeParse(value);
        if (r.success) return true;
        expect(r.error).toBeInstanceOf(ZodError);
        const e = validationError(r.error, 'body');
        expect(e.status).toBe(400);
        return true;
      }),
      { numRuns: 400 },
    );
  });
});
