import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { conflict } from '../errors';
import type { Store } from '../store';
import { deleteRecord, getRecord, putRecord, queryRecords } from '../store/records';
import { clientCodeSchema } from './clients';
import { joinTokenTtlSchema } from './join-tokens';

// Proxy deployments (guided install of a new client proxy: a Windows desktop agent at the
// client's site), one record per deployment (pk DEPLOYMENT, sk <id>). The join token created for
// it is kept only as its SHA-256: the record never holds the secret (docs/decisions.md).
//
// States (docs/fleet.md, "Proxy deployments"):
//   generated --validate (no problem)--> validated --finish--> finished
//   finished --desktop check: the new proxy's desktop is seen, token revoked--> completed
// A validate with problems, a desktop check that sees nothing or whose revocation fails leaves
// the state as it was (the last one is retried by the next check).

export const DEPLOYMENT_STATES = ['generated', 'validated', 'finished', 'completed'] as const;
export type DeploymentState = (typeof DEPLOYMENT_STATES)[number];
export type Revocation = 'pending' | 'revoked' | 'failed';

/** A DNS host name (the new proxy's, an AD domain): letters, digits, hyphens, dots. */
const dnsName = z
  .string()
  .trim()
  .toLowerCase()
  .max(253)
  .regex(/^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/, 'a DNS name');
/** host:port of a domain controller's LDAPS; the port defaults to 636. */
const ldapAddress = z
  .string()
  .trim()
  .toLowerCase()
  .max(260)
  .regex(/^[a-z0-9.-]{1,253}(?::\d{1,5})?$/, 'host or host:port')
  .refine((a) => !a.includes(':') || (Number(a.split(':')[1]) >= 1 && Number(a.split(':')[1]) <= 65535), 'port 1 to 65535')
  .transform((a) => (a.includes(':') ? a : `${a}:636`));

export const deploymentSiteSchema = z.object({
  /** host name the new proxy will register with (its teleport nodename) */
  hostname: dnsName,
  /** the client's Active Directory DNS domain */
  domain: dnsName.refine((d) => d.includes('.'), 'a domain with at least one dot'),
  /** a domain controller's LDAPS address; default `<domain>:636` */
  ldapAddress: ldapAddress.optional(),
});

export const deploymentGenerateSchema = deploymentSiteSchema.extend({
  clientCode: clientCodeSchema,
  ttlHours: joinTokenTtlSchema,
});
export type DeploymentGenerate = z.output<typeof deploymentGenerateSchema>;

/** `clientCode` may be named, and then only as the deployment's own client (403 client_scope otherwise). */
export const deploymentValidateSchema = deploymentSiteSchema.partial().extend({ clientCode: clientCodeSchema.optional() });
export type DeploymentValidate = z.output<typeof deploymentValidateSchema>;

export interface Deployment {
  id: string;
  clientCode: string;
  hostname: string;
  domain: string;
  ldapAddress: string;
  state: DeploymentState;
  /** SHA-256 of the join token (hex): finds the token again at revocation, never the secret */
  tokenHash: string;
  tokenId: string;
  tokenExpires: string;
  revocation: Revocation;
  createdAt: string;
  createdBy: string;
  validatedAt?: string;
  problems?: string[];
  directoryOutputAt?: string;
  finishedAt?: string;
  desktopSeenAt?: string;
  agent?: { id: string; hostname: string; desktops: number };
  completedAt?: string;
  updatedAt: string;
}

/** What the API shows: everything but the token hash (its prefix `tokenId` is the handle). */
export type DeploymentView = Omit<Deployment, 'tokenHash'> & { tokenExpired: boolean };

export const deploymentView = (d: Deployment, now = Date.now()): DeploymentView => {
  const { tokenHash: _hash, ...rest } = d;
  return { ...rest, tokenExpired: Date.parse(d.tokenExpires) <= now };
};

const PK = 'DEPLOYMENT';

export function newDeployment(input: DeploymentGenerate, token: { tokenHash: string; tokenId: string; expires: string }, by: string, id = randomUUID()): Deployment {
  const now = new Date().toISOString();
  return {
    id,
    clientCode: input.clientCode,
    hostname: input.hostname,
    domain: input.domain,
    ldapAddress: input.ldapAddress ?? `${input.domain}:636`,
    state: 'generated',
    tokenHash: token.tokenHash,
    tokenId: token.tokenId,
    tokenExpires: token.expires,
    revocation: 'pending',
    createdAt: now,
    createdBy: by,
    updatedAt: now,
  };
}

export async function insertDeployment(store: Store, d: Deployment): Promise<void> {
  if (!(await putRecord(store, PK, d.id, d, { expectVersion: 0 }))) throw conflict('deployment_exists');
}

export async function getDeployment(store: Store, id: string): Promise<Deployment | undefined> {
  return (await getRecord<Deployment>(store, PK, id))?.data;
}

export async function deleteDeployment(store: Store, id: string): Promise<void> {
  await deleteRecord(store, PK, id);
}

export async function listDeployments(store: Store): Promise<Deployment[]> {
  return (await queryRecords<Deployment>(store, PK)).map((r) => r.data).sort((a, b) => b.createdAt.localeCompare(a.createdAt));
}

/**
 * Change a deployment under optimistic concurrency: `change` sees the current record and returns
 * the next one (or throws, e.g. 409 for a transition not allowed from the current state).
 */
export async function updateDeployment(store: Store, id: string, change: (d: Deployment) => Deployment): Promise<Deployment> {
  for (let i = 0; i < 5; i++) {
    const rec = await getRecord<Deployment>(store, PK, id);
    if (!rec) throw conflict('deployment_gone');
    const next = { ...change(rec.data), updatedAt: new Date().toISOString() };
    if (await putRecord(store, PK, id, next, { expectVersion: rec.version })) return next;
  }
  throw new Error('deployment update lost five races');
}

/**
 * 409 unless the deployment is in one of `allowed` (the transition table above); the code names
 * what stands in the way: the next step not done yet, or the deployment being past this one.
 */
export function requireState(d: Deployment, allowed: DeploymentState[]): void {
  if (allowed.includes(d.state)) return;
  const code = { generated: 'deployment_not_validated', validated: 'deployment_not_finished', finished: 'deployment_finished', completed: 'deployment_completed' }[d.state];
  throw conflict(code, { state: d.state });
}
