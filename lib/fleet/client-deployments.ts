import { TokenRevokeFailed, revokeJoinToken } from './join-tokens';
import { deleteDeployment, listDeployments, type Deployment } from './deployments';
import type { AuditActor } from '../audit';
import type { FleetRuntime } from './runtime';

// Removing a client removes its proxy deployments (issue 25 #4, docs/decisions.md): a record
// whose client is gone can be reached by nobody but administrators and would keep a join token
// labelled with a client that no longer exists. Each join token that may still work is revoked
// first (audited token.revoke); a revocation that fails stops the removal before anything is
// deleted (502 token_revoke_failed with the manual command). Each record removed is audited
// `deployment.delete` under the client.

const tokenMayWork = (d: Deployment, now: number) => d.revocation !== 'revoked' && d.state !== 'completed' && Date.parse(d.tokenExpires) > now;

/** Who removes the client (register's Acting: its module imports this one). */
interface Acting {
  actor: AuditActor;
  correlationId: string;
}

export async function removeClientDeployments(rt: FleetRuntime, code: string, by: Acting): Promise<number> {
  const mine = (await listDeployments(rt.store)).filter((d) => d.clientCode === code);
  const now = Date.now();
  for (const d of mine.filter((x) => tokenMayWork(x, now))) {
    const r = await revokeJoinToken(rt.cli, d.tokenId, `fleet-deployment=${d.id}`);
    const base = { event: 'token.revoke', actor: by.actor, client: code, target: { id: d.tokenId, kind: 'token' }, correlationId: by.correlationId };
    if (!r.revoked) {
      await rt.audit.append({ ...base, outcome: 'error', reason: r.cause, details: { deployment: d.id, clientRemoval: true } });
      throw new TokenRevokeFailed(r.cause, { tokenId: d.tokenId, expires: d.tokenExpires, manualCommand: r.manualCommand(true) });
    }
    await rt.audit.append({ ...base, outcome: 'ok', details: { deployment: d.id, clientRemoval: true, ...(r.alreadyGone ? { alreadyGone: true } : {}) } });
  }
  for (const d of mine) {
    await deleteDeployment(rt.store, d.id);
    await rt.audit.append({ event: 'deployment.delete', outcome: 'success', actor: by.actor, client: code, target: { id: d.id, name: d.hostname, kind: 'deployment' }, correlationId: by.correlationId, details: { state: d.state, clientRemoval: true } });
  }
  return mine.length;
}
