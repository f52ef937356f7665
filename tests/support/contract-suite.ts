import fs from 'node:fs';
import { ConsoleClient } from '../../local/console-client';
import { ContractValidator, type App, type ObservedAnswer } from './contract';
import { answersFile, documentOf, readRecord, type RecordedVerdict } from './contract-recorder';
import { lapsCanaries, stack } from './stack';
import { adminAuth, call } from '../integration/fleet/support';
import { consoleDocument } from '../../functions/console/openapi';
import { fleetDocument } from '../../functions/fleet/openapi';

// The contract test's last step in each project (tests/integration/zzz-contract.test.ts,
// tests/e2e/zzz-contract.test.ts; issue 30): first it proves it can fail (a live answer against a
// planted wrong schema) and that the documents it validates against are the ones the APIs serve,
// then it reads the run's record: one answer that no operation declares, or that breaks its
// schema, fails the run.

const secrets = () => [
  ...Object.values(stack.directory.technicalAccounts).map((a) => a.password),
  ...stack.accounts.map((a) => a.password),
  ...stack.accounts.filter((a) => a.totpSecret).map((a) => a.totpSecret!),
  stack.directory.admin.password,
  ...lapsCanaries(),
];

/** A copy of a document whose 200 answer of one operation requires a property the API never sends. */
function plantWrongSchema(doc: object, path: string, method: string): object {
  const copy = JSON.parse(JSON.stringify(doc));
  const media = copy.paths[path][method].responses['200'].content['application/json'];
  media.schema = { allOf: [media.schema, { type: 'object', required: ['plantedByTheContractTest'] }] };
  return copy;
}

const asObserved = (method: string, url: string, r: { status: number; headers: ObservedAnswer['headers']; text: string }): ObservedAnswer => ({ method, url, status: r.status, headers: r.headers, body: r.text });

/** The summary the run prints: answers per application, operations seen, answers outside the document. */
function summary(record: RecordedVerdict[]) {
  const per = (app: App) => {
    const mine = record.filter((v) => v.app === app);
    const ops = Object.values((documentOf(app) as { paths: Record<string, object> }).paths).reduce((n, p) => n + Object.keys(p).length, 0);
    return { answers: mine.length, operations: `${new Set(mine.filter((v) => v.operation).map((v) => v.operation)).size}/${ops}`, outsideTheDocument: mine.filter((v) => !v.operation).length };
  };
  return { console: per('console'), fleet: per('fleet') };
}

export function contractSuite(project: 'integration' | 'e2e') {
  const dir = process.env.HDC_CONTRACT_DIR;

  it('has a record for this run', () => {
    expect(dir).toBeDefined();
  });

  it('catches a planted wrong schema on a live console answer, and passes the true one', async () => {
    const r = await new ConsoleClient(stack.consoleUrl).get('/api/auth/antiforgery');
    const answer = asObserved('GET', '/api/auth/antiforgery', r);
    expect(new ContractValidator('console', documentOf('console') as never).validate(answer).violations).toEqual([]);
    const planted = new ContractValidator('console', plantWrongSchema(documentOf('console'), '/api/auth/antiforgery', 'get') as never).validate(answer);
    expect(planted.violations).toEqual(['(body) lacks plantedByTheContractTest']);
  });

  it('catches a planted wrong schema on a live fleet answer, and passes the true one', async () => {
    const r = await call('GET', '/api/auth/me', await adminAuth());
    const answer = asObserved('GET', '/api/auth/me', r);
    expect(new ContractValidator('fleet', documentOf('fleet') as never).validate(answer).violations).toEqual([]);
    expect(new ContractValidator('fleet', plantWrongSchema(documentOf('fleet'), '/api/auth/me', 'get') as never).validate(answer).violations).toEqual(['(body) lacks plantedByTheContractTest']);
  });

  it('validates against the documents the APIs serve at /openapi/v1.json', async () => {
    const served = await new ConsoleClient(stack.consoleUrl).get('/openapi/v1.json'); // Development: open to anyone
    expect(served.status).toBe(200);
    const fleet = await call('GET', '/openapi/v1.json', await adminAuth());
    expect(fleet.status).toBe(200);
    // the served ones name this instance's server and access header, and the test stack runs in
    // Development (the document's own route is open); the answers are the record's
    const mine = consoleDocument({ helpdeskEnabled: '/api/computers/{id}/laps' in served.body.paths, development: true });
    expect(served.body.paths).toEqual(mine.paths);
    expect(fleet.body.paths).toEqual(fleetDocument().paths);
    for (const [doc, app] of [
      [served.body, 'console'],
      [fleet.body, 'fleet'],
    ] as const) {
      expect(doc.components.schemas).toEqual((documentOf(app) as { components: { schemas: unknown } }).components.schemas);
    }
  });

  it('recorded no secret', () => {
    const text = fs.existsSync(answersFile(dir!)) ? fs.readFileSync(answersFile(dir!), 'utf8') : '';
    for (const s of secrets()) expect(text.includes(s)).toBe(false);
  });

  it(`finds every answer of the ${project} suite declared by its document`, () => {
    const record = readRecord(dir!);
    console.log(`contract (${project}): ${JSON.stringify(summary(record))}`);
    expect(record.length).toBeGreaterThan(0);
    const broken = record.filter((v) => v.violations.length).map((v) => `${v.app} ${v.operation ?? `${v.method} (no operation)`} ${v.status}: ${v.violations.join('; ')}`);
    expect([...new Set(broken)]).toEqual([]);
  });
}
