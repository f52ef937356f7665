import { randomBytes } from 'node:crypto';
import { createLocalJWKSet, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { fleetRoutes } from '../../../functions/fleet/all-routes';
import { fleetDocument } from '../../../functions/fleet/openapi';
import { AuditChain } from '../../../lib/audit';
import type { ClusterCli } from '../../../lib/fleet/cluster-cli';
import { loadFleetConfig } from '../../../lib/fleet/config';
import { createFleetHttpHandler } from '../../../lib/fleet/http';
import { signLocalToken } from '../../../lib/fleet/jwt';
import { setLocalAdminPassword } from '../../../lib/fleet/local-admin';
import type { FleetRoute } from '../../../lib/fleet/route';
import type { FleetRuntime } from '../../../lib/fleet/runtime';
import type { Store } from '../../../lib/store';
import { ContractValidator } from '../../support/contract';
import { httpEvent } from '../../support/http-event';
import { memoryDynamoStore } from '../../support/memory-store';

// The fleet plane in process: the real pipeline and every route on a memory store, with the
// environment a test needs (what a restart with another configuration would give), a cluster CLI
// of the test's choosing and access-platform tokens signed by a key of its own. Each answer is
// held against the fleet plane's OpenAPI document.

export interface Reply {
  status: number;
  body: any;
  text: string;
}

export async function fleetInProcess(opts: { env?: Record<string, string>; cli?: ClusterCli; store?: Store } = {}) {
  const key = randomBytes(32);
  const store = opts.store ?? memoryDynamoStore('fleet-in-process');
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const rt: FleetRuntime = {
    config: loadFleetConfig({ FLEET_TABLE: 'fleet-in-process', ACCESS_JWT_ADMIN_ROLES: 'fleet-admin', ACCESS_JWT_ALLOWED_ROLES: 'fleet-technician', ...opts.env }),
    store,
    audit: new AuditChain(store, 'fleet'),
    cli: opts.cli ?? { run: async () => ({ stdout: '[]', stderr: '' }) },
    jwks: createLocalJWKSet({ keys: [{ ...(await exportJWK(publicKey)), alg: 'ES256', kid: 'k1' }] }) as unknown as FleetRuntime['jwks'],
    masterKey: async () => key,
  };
  const handler = createFleetHttpHandler(Object.values(fleetRoutes).flat() as FleetRoute<any, any, any, any, any>[], () => rt);
  const contract = new ContractValidator('fleet', fleetDocument() as never);
  await setLocalAdminPassword(store, 'admin', 'In-Process-Admin-Password-1!');
  const admin = `Bearer ${(await signLocalToken(key, 'admin', 1, 3600)).token}`;

  /** an access-platform user's bearer header */
  const platform = async (username: string, roles: string[]) =>
    `Bearer ${await new SignJWT({ username, roles }).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setIssuedAt().setExpirationTime('1h').sign(privateKey)}`;

  async function call(method: string, path: string, authorization?: string, body?: unknown): Promise<Reply> {
    const headers: Record<string, string> = {};
    if (authorization) headers.authorization = authorization;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const url = new URL(path, 'https://fleet.in-process.test');
    const query = url.search ? Object.fromEntries(url.searchParams) : undefined;
    const event = httpEvent(method, url.pathname, { headers, body: body === undefined ? undefined : JSON.stringify(body), query });
    event.rawQueryString = url.search.slice(1);
    const r = await handler(event);
    const text = String(r.body ?? '');
    const verdict = contract.validate({ method, url: path, status: r.statusCode ?? 0, headers: (r.headers ?? {}) as Record<string, string>, body: text });
    expect(verdict.violations).toEqual([]);
    let parsed: any;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: r.statusCode ?? 0, body: parsed, text };
  }

  /** the audit rows, oldest first */
  async function auditRows() {
    const out = [];
    for await (const row of rt.audit.rows()) out.push(row);
    return out;
  }

  return { rt, store, admin, platform, call, auditRows };
}
