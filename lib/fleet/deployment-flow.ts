import type { FleetAccess } from './access';
import { deploymentInstallFiles, directoryScript } from './deployment-artifacts';
import {
  deploymentView,
  getDeployment,
  insertDeployment,
  listDeployments,
  newDeployment,
  requireState,
  updateDeployment,
  type Deployment,
  type DeploymentGenerate,
  type DeploymentValidate,
  type DeploymentView,
} from './deployments';
import { ApiError } from '../errors';
import { addJoinToken, revokeJoinToken, TokenRevokeFailed } from './join-tokens';
import { buildProxies, readSnapshot } from './nodes';
import { requireRegisteredClient, type Acting } from './register';
import type { Addressed, FleetContext } from './route';
import type { FleetRuntime } from './runtime';

// The guided install of a new client proxy as the routes use it (functions/fleet/deployments.ts):
// every step audited under the deployment's client; the join token created by an administrator
// and revoked by the desktop check once the new proxy's desktop is seen (spec: Levels).
// Audit details never use a key with "token" in it (the audit writer redacts those): the token's
// handle is `target.id` of token.* rows and `joinHandle` elsewhere.

/** Where the install puts the join token on the new proxy (teleport.yaml names the file, not the value). */
export const TOKEN_FILE = '/var/lib/teleport/join-token';

const target = (d: Pick<Deployment, 'id' | 'hostname'>) => ({ id: d.id, name: d.hostname, kind: 'deployment' });
const codeOf = (e: unknown) => (e instanceof ApiError ? e.code : 'internal_error');

async function auditDeployment(rt: FleetRuntime, by: Acting, d: Pick<Deployment, 'id' | 'hostname' | 'clientCode'>, event: string, outcome: string, details?: Record<string, unknown>, reason?: string) {
  await rt.audit.append({ event, outcome, actor: by.actor, client: d.clientCode, target: target(d), correlationId: by.correlationId, ...(reason ? { reason } : {}), ...(details ? { details } : {}) });
}

export async function deploymentsInScope(rt: FleetRuntime, access: FleetAccess): Promise<DeploymentView[]> {
  const visible = access.visibleCodes();
  return (await listDeployments(rt.store)).filter((d) => !visible || visible.has(d.clientCode)).map((d) => deploymentView(d));
}

export { getDeployment };

/**
 * Administrators: a deployment and its join token (`tctl tokens add --type=windowsdesktop`,
 * labelled with the client and the deployment). The token is in this answer only.
 */
export async function generateDeployment(rt: FleetRuntime, input: DeploymentGenerate, by: Acting) {
  await requireRegisteredClient(rt, input.clientCode);
  const draft = newDeployment(input, { tokenHash: '', tokenId: '', expires: '' }, by.actor.name ?? by.actor.id ?? 'unknown');
  let issued;
  try {
    issued = await addJoinToken(rt.cli, { type: 'windowsdesktop', ttlHours: input.ttlHours, labels: { client_code: input.clientCode, 'fleet-deployment': draft.id } });
  } catch (e) {
    await auditDeployment(rt, by, draft, 'deployment.generate', 'error', undefined, codeOf(e));
    throw e;
  }
  const d: Deployment = { ...draft, tokenHash: issued.tokenHash, tokenId: issued.tokenId, tokenExpires: issued.expires };
  await insertDeployment(rt.store, d);
  await auditDeployment(rt, by, d, 'deployment.generate', 'success', { joinHandle: d.tokenId, ttlHours: input.ttlHours, expires: d.tokenExpires, domain: d.domain });
  return {
    deployment: deploymentView(d),
    joinToken: { token: issued.token, tokenId: issued.tokenId, expires: issued.expires, roles: issued.roles, file: TOKEN_FILE },
  };
}

/** Why a deployment cannot go on as it stands (none: it may be validated). */
async function problemsOf(rt: FleetRuntime, d: Deployment, now = Date.now()): Promise<string[]> {
  const problems: string[] = [];
  if (Date.parse(d.tokenExpires) <= now) problems.push('token_expired');
  if (d.revocation === 'revoked') problems.push('token_revoked');
  if (!rt.config.DEFAULT_PROXY_ADDR) problems.push('proxy_address_unknown');
  const { proxies } = buildProxies(await readSnapshot(rt.cli), now);
  if (proxies.some((p) => p.hostname.toLowerCase() === d.hostname)) problems.push('hostname_in_use');
  const ldapHost = d.ldapAddress.split(':')[0];
  if (ldapHost !== d.domain && !ldapHost.endsWith(`.${d.domain}`)) problems.push('ldap_outside_domain');
  return problems;
}

/**
 * Operators of the client: check (and optionally correct) the site's facts. No problem: the
 * deployment is validated; problems: it is (back) at generated, with the problems listed.
 */
export async function validateDeployment(rt: FleetRuntime, current: Deployment, patch: DeploymentValidate, by: Acting) {
  requireState(current, ['generated', 'validated']);
  const merged: Deployment = {
    ...current,
    ...(patch.hostname ? { hostname: patch.hostname } : {}),
    ...(patch.domain ? { domain: patch.domain } : {}),
    ...(patch.ldapAddress ? { ldapAddress: patch.ldapAddress } : patch.domain && current.ldapAddress === `${current.domain}:636` ? { ldapAddress: `${patch.domain}:636` } : {}),
  };
  const problems = await problemsOf(rt, merged);
  const d = await updateDeployment(rt.store, current.id, (x) => {
    requireState(x, ['generated', 'validated']);
    const next: Deployment = { ...x, hostname: merged.hostname, domain: merged.domain, ldapAddress: merged.ldapAddress, problems, state: problems.length ? 'generated' : 'validated' };
    if (problems.length) delete next.validatedAt;
    else next.validatedAt = new Date().toISOString();
    return next;
  });
  const fields = (['hostname', 'domain', 'ldapAddress'] as const).filter((k) => merged[k] !== current[k]);
  await auditDeployment(rt, by, d, 'deployment.validate', problems.length ? 'failure' : 'success', { problems, ...(fields.length ? { fields } : {}) });
  return { valid: problems.length === 0, problems, deployment: deploymentView(d) };
}

/** The files and commands of the install, without the token (it was shown at generation). */
export function previewDeployment(rt: FleetRuntime, d: Deployment) {
  return { deployment: deploymentView(d), ...deploymentInstallFiles(d, { proxyAddr: rt.config.DEFAULT_PROXY_ADDR ?? null, tokenFile: TOKEN_FILE }) };
}

/** The directory steps a domain administrator runs by hand (after validation). */
export async function deploymentDirectoryOutput(rt: FleetRuntime, current: Deployment, by: Acting) {
  requireState(current, ['validated', 'finished']);
  const d = await updateDeployment(rt.store, current.id, (x) => ({ ...x, directoryOutputAt: new Date().toISOString() }));
  await auditDeployment(rt, by, d, 'deployment.directory_output', 'success');
  return { deployment: deploymentView(d), ...directoryScript(d) };
}

/** The install on site is done: the deployment waits for the new proxy's desktop. Idempotent. */
export async function finishDeployment(rt: FleetRuntime, current: Deployment, by: Acting) {
  requireState(current, ['validated', 'finished']);
  if (current.state === 'finished') return { deployment: deploymentView(current) };
  const d = await updateDeployment(rt.store, current.id, (x) => {
    requireState(x, ['validated', 'finished']);
    return { ...x, state: 'finished', finishedAt: x.finishedAt ?? new Date().toISOString() };
  });
  await auditDeployment(rt, by, d, 'deployment.finish', 'success');
  return { deployment: deploymentView(d) };
}

/**
 * Is the new proxy there with a desktop? Then its join token has done its work: revoke it
 * (`tctl tokens rm`) and complete the deployment. A failed revocation is audited `token.revoke`
 * outcome error and answered 502 `token_revoke_failed` with the manual command; the next check
 * retries it. Nothing seen: nothing changes.
 */
export async function checkDeploymentDesktop(rt: FleetRuntime, current: Deployment, by: Acting, admin: boolean) {
  requireState(current, ['finished', 'completed']);
  if (current.state === 'completed') return { seen: true, revoked: true, deployment: deploymentView(current) };
  const { proxies } = buildProxies(await readSnapshot(rt.cli));
  const agent = proxies.find((p) => p.hostname.toLowerCase() === current.hostname && p.windowsServers > 0);
  if (!agent) return { seen: false, revoked: false, deployment: deploymentView(current) };
  const seen = { id: agent.id, hostname: agent.hostname, desktops: agent.windowsServers };
  const r = await revokeJoinToken(rt.cli, current.tokenId, `fleet-deployment=${current.id}`);
  const tokenTarget = { id: current.tokenId, kind: 'token' };
  if (!r.revoked) {
    await rt.audit.append({ event: 'token.revoke', outcome: 'error', reason: r.cause, actor: by.actor, client: current.clientCode, target: tokenTarget, correlationId: by.correlationId, details: { deployment: current.id } });
    await updateDeployment(rt.store, current.id, (x) => ({ ...x, desktopSeenAt: x.desktopSeenAt ?? new Date().toISOString(), agent: seen, revocation: 'failed' }));
    throw new TokenRevokeFailed(r.cause, { tokenId: current.tokenId, expires: current.tokenExpires, manualCommand: r.manualCommand(admin) });
  }
  await rt.audit.append({ event: 'token.revoke', outcome: 'ok', actor: by.actor, client: current.clientCode, target: tokenTarget, correlationId: by.correlationId, details: { deployment: current.id, ...(r.alreadyGone ? { alreadyGone: true } : {}) } });
  const now = new Date().toISOString();
  const d = await updateDeployment(rt.store, current.id, (x) => ({ ...x, state: 'completed', desktopSeenAt: x.desktopSeenAt ?? now, agent: seen, revocation: 'revoked', completedAt: now }));
  await auditDeployment(rt, by, d, 'deployment.complete', 'success', { agent: seen.id, desktops: seen.desktops });
  return { seen: true, revoked: true, deployment: deploymentView(d) };
}

/**
 * A body that names a client names the deployment's own (spec: Server-side enforcement 4): any
 * other client is 403 client_scope, audited auth.forbidden, before anything is read or changed.
 */
export async function requireDeploymentsClient(ctx: FleetContext<{ clientCode?: string }, any, any, Deployment>): Promise<void> {
  const named = ctx.body?.clientCode;
  if (named !== undefined && named !== ctx.addressed!.resource.clientCode) await ctx.refuse('client_scope', 'operator', named);
}

/** The guard's resolver: a deployment and its client (unknown and out of scope answer 404 alike). */
export async function deploymentResource(ctx: FleetContext<any, any, { id: string }>): Promise<Addressed<Deployment> | undefined> {
  const d = await getDeployment(ctx.rt.store, ctx.params.id);
  return d ? { clientCode: d.clientCode, resource: d } : undefined;
}
