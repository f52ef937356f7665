import { AuditChain, type AuditInput } from '../../../lib/audit';
import { makeAccess } from '../../../lib/fleet/access';
import { auditView, TECHNICIAN_SCAN_LIMIT } from '../../../lib/fleet/audit-view';
import { memoryStore } from '../../support/memory-store';

// GET /api/audit for a technician: his clients' rows and his own actions, found among the most
// recent TECHNICIAN_SCAN_LIMIT rows only (fleet spec, Audit entry), with `scannedLimit` saying so.
// Boundary: the technician's rows at exactly the limit's edge, one inside and one just past it.

const technician = makeAccess({ username: 'tech-alice', method: 'access', admin: false, roles: [] }, { all: false, clients: [{ code: 'acme', level: 'operator', sources: ['assignment'] }] });
const admin = makeAccess({ username: 'admin', method: 'local', admin: true, roles: [] }, { all: true });

const other = (i: number): AuditInput => ({ event: 'nodes.inventory', outcome: 'success', actor: { name: 'someone', provider: 'access' }, client: 'globex', details: { i } });
const acme = (marker: string): AuditInput => ({ event: 'nodes.inventory', outcome: 'success', actor: { name: 'someone', provider: 'access' }, client: 'acme', details: { marker } });

describe(`the technician audit scan stops at ${TECHNICIAN_SCAN_LIMIT} rows`, () => {
  const store = memoryStore();
  const chain = new AuditChain(store, 'fleet');

  beforeAll(async () => {
    // oldest first: an acme row that ends up just past the limit, then one exactly at the limit's
    // oldest position, then foreign rows filling the rest of the newest TECHNICIAN_SCAN_LIMIT
    await chain.append(acme('past-the-limit'));
    await chain.append(acme('at-the-limit'));
    const fill = TECHNICIAN_SCAN_LIMIT - 1;
    for (let i = 0; i < fill; i += 10) await chain.appendAll(Array.from({ length: Math.min(10, fill - i) }, (_, k) => other(i + k)));
  }, 120_000);

  it('finds the row at the limit, not the one past it, and says scannedLimit', async () => {
    const r = await auditView(chain, technician, { limit: 200 });
    expect(r.scannedLimit).toBe(TECHNICIAN_SCAN_LIMIT);
    expect(r.entries.map((e) => e.details?.marker)).toEqual(['at-the-limit']);
    expect(r.entries.every((e) => e.client === 'acme')).toBe(true);
  });

  it('an administrator reads the whole chain, with no scannedLimit', async () => {
    const r = await auditView(chain, admin, { limit: TECHNICIAN_SCAN_LIMIT + 10 });
    expect(r.scannedLimit).toBeUndefined();
    expect(r.entries).toHaveLength(TECHNICIAN_SCAN_LIMIT + 1);
    expect(r.entries.at(-1)?.details?.marker).toBe('past-the-limit');
  });
});
