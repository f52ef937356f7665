import { consoleDocument } from '../../functions/console/openapi';
import { fleetDocument } from '../../functions/fleet/openapi';
import { ContractValidator, type ObservedAnswer } from '../support/contract';

// The contract test's validator (issue 30) fails where it must: an undeclared status, code,
// media type, property or header, a body against a planted wrong schema, a route no operation
// describes answering anything but the gateway's refusal. And it passes true answers.
const consoleDoc = consoleDocument({ helpdeskEnabled: true });
const console_ = new ContractValidator('console', consoleDoc as never);
const fleet = new ContractValidator('fleet', fleetDocument() as never);

const json = (body: unknown, status = 200, extra: Record<string, string> = {}) => ({
  status,
  headers: { 'content-type': 'application/json; charset=utf-8', 'x-correlation-id': 'c-1', ...extra },
  body: body === undefined ? '' : JSON.stringify(body),
});
const answer = (method: string, url: string, r: Omit<ObservedAnswer, 'method' | 'url'>): ObservedAnswer => ({ method, url, ...r });

describe('the contract validator', () => {
  it('passes a true answer, and names its operation', () => {
    expect(console_.validate(answer('GET', '/api/auth/antiforgery', json({ token: 't' })))).toEqual({ operation: 'GET /api/auth/antiforgery', status: 200, violations: [] });
    expect(console_.validate(answer('GET', '/api/computers/abc?x=1', json({ code: 'not_found' }, 404))).violations).toEqual([]);
  });

  it('catches a planted wrong schema', () => {
    const planted = JSON.parse(JSON.stringify(consoleDoc));
    expect(planted.paths['/api/auth/antiforgery'].get.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Antiforgery' });
    planted.components.schemas.Antiforgery.properties.token = { type: 'number' };
    const v = new ContractValidator('console', planted).validate(answer('GET', '/api/auth/antiforgery', json({ token: 't' })));
    expect(v.violations).toEqual(['/token must be number']);
  });

  it('refuses a status the operation does not declare', () => {
    expect(console_.validate(answer('GET', '/api/auth/antiforgery', json({ code: 'teapot' }, 418))).violations[0]).toMatch(/^status 418 is not declared .*\(code teapot\)$/);
    // a create answers 201, not 200
    expect(console_.validate(answer('POST', '/api/groups', json({ outcome: 'succeeded' }, 200))).violations[0]).toMatch(/^status 200 is not declared/);
  });

  it('refuses an error code its status does not declare, naming the code', () => {
    expect(console_.validate(answer('GET', '/api/computers', json({ code: 'forbidden', permission: 'computers.read' }, 403))).violations).toEqual([]);
    expect(console_.validate(answer('GET', '/api/computers', json({ code: 'made_up' }, 403))).violations).toEqual(['code "made_up" is not declared for this status']);
  });

  it('refuses a property the schema does not declare, and a missing one', () => {
    expect(console_.validate(answer('GET', '/api/auth/antiforgery', json({ token: 't', secret: 'x' }))).violations).toEqual(['(body) has a property the schema does not declare: secret']);
    expect(console_.validate(answer('GET', '/api/setup', json({ configured: true }))).violations).toEqual(['(body) lacks setupOpen']);
  });

  it('refuses an answer without a header its status declares required', () => {
    const r = json({ token: 't' });
    delete (r.headers as Record<string, string>)['x-correlation-id'];
    expect(console_.validate(answer('GET', '/api/auth/antiforgery', r)).violations).toEqual(['header X-Correlation-Id is declared required and is missing']);
  });

  it('holds files to their media type and headers', () => {
    const csv = (headers: Record<string, string>) => ({ status: 200, headers: { 'x-correlation-id': 'c', ...headers }, body: 'a,b\r\n' });
    expect(console_.validate(answer('GET', '/api/exports/users', csv({ 'content-type': 'text/csv; charset=utf-8', 'content-disposition': 'attachment; filename="u.csv"', 'x-row-count': '0' }))).violations).toEqual([]);
    expect(console_.validate(answer('GET', '/api/exports/users', csv({ 'content-type': 'text/csv; charset=utf-8' }))).violations).toEqual([
      'header Content-Disposition is declared required and is missing',
      'header X-Row-Count is declared required and is missing',
    ]);
    expect(console_.validate(answer('GET', '/api/exports/users', json([]))).violations).toContain('media type application/json is not declared for 200 (declared: text/csv)');
  });

  it('refuses a body where none is declared (204)', () => {
    expect(console_.validate(answer('POST', '/api/auth/logout', json(undefined, 204))).violations).toEqual([]);
    expect(console_.validate(answer('POST', '/api/auth/logout', json({ ok: true }, 204))).violations).toEqual(['status 204 declares no body, and the answer has one']);
  });

  it('takes a literal path before a template (the gateway routes so)', () => {
    expect(fleet.operationOf('DELETE', '/api/alerts/silences/5d7e5c1e-1f0e-4b4e-9c1a-1b2c3d4e5f60')).toMatchObject({ template: '/api/alerts/silences/{id}' });
    expect(fleet.operationOf('GET', '/api/alerts/settings')).toMatchObject({ template: '/api/alerts/settings' });
    expect(fleet.operationOf('POST', '/api/alerts/console_down:acme/acknowledge')).toMatchObject({ template: '/api/alerts/{key}/acknowledge' });
  });

  it('takes an answer outside the document only as the gateway refusal', () => {
    expect(console_.validate(answer('GET', '/api/nothing-here', json({ code: 'not_found' }, 404)))).toEqual({ operation: null, status: 404, violations: [] });
    expect(console_.validate(answer('PATCH', '/api/computers', json({ code: 'not_found' }, 404))).violations).toEqual([]);
    expect(console_.validate(answer('GET', '/api/nothing-here', json({ ok: true }, 200))).violations).toEqual(['GET /api/nothing-here matches no operation and answered 200 without a { code } body']);
  });
});
