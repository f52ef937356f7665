import { canonicalJson } from '../../../lib/audit/canonical';
import { storedBody, type StoredRow } from '../../../lib/audit/rows';
import { adminAuth, auditRowOf, auditRows, call, personaHeaders, fleetStore, stack } from './support';

// Clients, consoles, technician assignments and the fleet audit chain.
const store = fleetStore();
const ACME_CONSOLE = stack.consoles.find((c) => c.clientCode === 'acme')!.id;

describe('technician assignments', () => {
  it('refuses unregistered codes with 400 unknown_client, naming them, changing nothing', async () => {
    const r = await call('PUT', '/api/technicians', { ...(await adminAuth()), body: { username: 'tech-zed', clients: [{ code: 'acme', level: 'viewer' }, { code: 'ghost', level: 'operator' }] } });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ code: 'unknown_client', codes: ['ghost'] });
    expect((await call('GET', '/api/technicians', await adminAuth())).body.technicians.map((t: any) => t.username)).not.toContain('tech-zed');
  });
  it('creates, replaces and deletes, audited; deleting a client removes it from every assignment', async () => {
    const admin = await adminAuth();
    await call('DELETE', '/api/technicians/Tech-Zed', admin); // a clean start on a reused stack
    await call('DELETE', '/api/clients/temp-co', admin);
    expect((await call('POST', '/api/clients', { ...admin, body: { code: 'temp-co', name: 'Temp' } })).status).toBe(201);
    const c = await call('PUT', '/api/technicians', { ...admin, body: { username: 'Tech-Zed', clients: [{ code: 'temp-co', level: 'operator' }, { code: 'initech', level: 'viewer' }] } });
    expect(c.status).toBe(201);
    expect(await auditRowOf(c.correlationId)).toMatchObject({ event: 'technician.create', target: { id: 'Tech-Zed' } });
    const u = await call('PUT', '/api/technicians', { ...admin, body: { username: 'Tech-Zed', clients: [{ code: 'temp-co', level: 'viewer' }, { code: 'initech', level: 'viewer' }] } });
    expect(await auditRowOf(u.correlationId)).toMatchObject({ event: 'technician.update' });
    expect((await call('DELETE', '/api/clients/temp-co', admin)).status).toBe(204);
    const t = (await call('GET', '/api/technicians', admin)).body.technicians.find((x: any) => x.username === 'Tech-Zed');
    expect(t.clients).toEqual([{ code: 'initech', level: 'viewer' }]);
    const d = await call('DELETE', '/api/technicians/Tech-Zed', admin);
    expect(d.status).toBe(204);
    expect(await auditRowOf(d.correlationId)).toMatchObject({ event: 'technician.delete' });
    expect((await call('DELETE', '/api/technicians/Tech-Zed', admin)).status).toBe(404);
  });
  it('reports how convention roles are honoured', async () => {
    expect((await call('GET', '/api/technicians', await adminAuth())).body).toMatchObject({ clientRolesEnabled: true, clientRoleLevel: 'viewer' });
  });
});

describe('clients', () => {
  it('validates codes and refuses duplicates', async () => {
    const admin = await adminAuth();
    expect((await call('POST', '/api/clients', { ...admin, body: { code: 'Bad_Code', name: 'x' } })).body.code).toBe('validation_failed');
    expect((await call('POST', '/api/clients', { ...admin, body: { code: 'acme', name: 'x' } })).body.code).toBe('client_exists');
    expect((await call('DELETE', '/api/clients/acme', admin)).body).toEqual({ code: 'client_has_consoles', consoles: 1 });
  });
  it('filters the register by scope', async () => {
    const r = await call('GET', '/api/clients', await personaHeaders('outsider'));
    expect(r.body.clients.map((c: any) => c.code)).toEqual(['initech']);
  });
});

describe('consoles', () => {
  it('stores the access token encrypted and never returns it', async () => {
    const admin = await adminAuth();
    const secret = 'console-token-SECRET-4f9a2c71b8';
    const r = await call('POST', '/api/consoles', { ...admin, body: { clientCode: 'initech', url: 'https://initech-hdc.clients.example/', token: secret } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ url: 'https://initech-hdc.clients.example', tokenSet: true, ca: null });
    expect(r.text).not.toContain(secret);
    const { Item } = await store.get({ Key: { pk: 'CONSOLE', sk: r.body.id } });
    expect(Item!.data.sealedToken).toMatch(/^v1\./);
    const scan = await store.scan();
    expect(JSON.stringify(scan.Items)).not.toContain(secret);
    expect(JSON.stringify(await auditRows(100))).not.toContain(secret);
    await call('DELETE', `/api/consoles/${r.body.id}`, admin);
  });
  it('lets an operator rotate the token but not change the URL or CA (403 admin_required, audited)', async () => {
    const op = await personaHeaders('operator');
    const before = (await call('GET', `/api/consoles/${ACME_CONSOLE}`, op)).body;
    const r = await call('PUT', `/api/consoles/${ACME_CONSOLE}`, { ...op, body: { url: 'https://evil.example' } });
    expect([r.status, r.body.code]).toEqual([403, 'admin_required']);
    expect(await auditRowOf(r.correlationId)).toMatchObject({ event: 'auth.forbidden', reason: 'admin_required', client: 'acme' });
    expect((await call('GET', `/api/consoles/${ACME_CONSOLE}`, op)).body.url).toBe(before.url);
    const same = await call('PUT', `/api/consoles/${ACME_CONSOLE}`, { ...op, body: { url: before.url, token: 'rotated-by-operator-0123456789' } });
    expect(same.status).toBe(200);
    expect(await auditRowOf(same.correlationId)).toMatchObject({ event: 'console.update', details: { fields: ['token'] } });
  });
  it('refuses moving a console to a client the operator does not operate (403 client_scope)', async () => {
    const r = await call('PUT', `/api/consoles/${ACME_CONSOLE}`, { ...(await personaHeaders('operator')), body: { clientCode: 'globex' } });
    expect([r.status, r.body.code]).toEqual([403, 'client_scope']);
    // filed under the caller's scope (acme), naming the target in the details: globex's viewers never see the probe
    expect(await auditRowOf(r.correlationId)).toMatchObject({ event: 'auth.forbidden', reason: 'client_scope', client: 'acme', details: { requiredLevel: 'operator', client: 'globex' } });
    expect((await call('GET', `/api/consoles/${ACME_CONSOLE}`, await adminAuth())).body.clientCode).toBe('acme');
  });
  it("filters ?clientCode= by scope (another client's code lists nothing)", async () => {
    const r = await call('GET', '/api/consoles?clientCode=globex', await personaHeaders('operator'));
    expect(r.body.consoles).toEqual([]);
  });
});

describe('audit', () => {
  it("shows a technician his clients' rows and his own actions only", async () => {
    const op = await personaHeaders('operator');
    await call('GET', '/api/nodes/inventory', await personaHeaders('viewer')); // a row filed under clients
    const r = await call('GET', '/api/audit?limit=200', op);
    expect(r.status).toBe(200);
    for (const e of r.body.entries) expect(e.client === 'acme' || e.actor?.name === 'tech-alice').toBe(true);
    expect(r.body.entries.some((e: any) => e.client === 'globex')).toBe(false);
    expect(r.body.scannedLimit).toBe(5000);
  });
  it('verifies for administrators; the client field is inside the hash', async () => {
    const admin = await adminAuth();
    expect((await call('GET', '/api/audit/verify', admin)).body).toMatchObject({ ok: true });
    const rows = await auditRows(50);
    const withClient = rows.find((r) => r.client);
    const key = { pk: 'AUDIT#fleet', sk: String(withClient.seq).padStart(12, '0') };
    const { Item } = await store.get({ Key: key });
    try {
      const body = storedBody(Item as StoredRow);
      for (const tampered of [{ ...body, client: 'other' }, (({ client, ...rest }) => rest)(body)]) {
        await store.put({ Item: { ...Item, bodyText: canonicalJson(tampered) } });
        expect((await call('GET', '/api/audit/verify', admin)).body).toMatchObject({ ok: false, firstBadSeq: withClient.seq, problem: 'hash_mismatch' });
      }
    } finally {
      await store.put({ Item });
    }
    expect((await call('GET', '/api/audit/verify', admin)).body.ok).toBe(true);
  });
});
