import { requiresApproval, type ApprovalSettings } from '../approvals/settings';
import type { InstanceSettings } from '../setup/settings';
import { isAtOrBelow } from './classify';
import type { DecisionContext, ScopedGrant } from './engine';
import type { Permission } from './permissions';
import { applyAuthzWrites, rightsFrom, type AuthzState, type AuthzWrite } from './rights';

// Self-widening (issue 8, beyond the spec): a role or delegation change that would give the
// operator making it a right they do not hold yet needs a second administrator's approval. The
// rights before and after are the ones the engine uses (operatorRights on fresh group SIDs,
// scopes at their current DN inside the managed OUs), compared grant by grant: a grant after the
// change is covered when one grant before holds all its permissions (directly where it holds them
// directly) on a scope at or above each of its OUs. Conservative: a combination of two old grants
// never covers a new one, since the engine's same-delegation rules make it more than their sum.

export interface NewRight {
  delegation: string;
  /** permissions the covering grants lacked (every permission of the grant when only the combination is new) */
  permissions: Permission[];
  scope: string[];
}

export interface OperatorFacts {
  guid: string;
  sid: string;
  groupSids: string[];
}

const coversScope = (b: ScopedGrant, g: ScopedGrant) => g.scopeDns.every((dn) => b.scopeDns.some((ou) => isAtOrBelow(dn, ou)));
const direct = (g: ScopedGrant, approvals: ApprovalSettings) => [...g.permissions].filter((p) => !requiresApproval(approvals, p, g.delegationId));

/** Grants after the change that no grant before covers (pure). */
export function uncoveredGrants(before: ScopedGrant[], after: ScopedGrant[], approvals: ApprovalSettings): NewRight[] {
  const out: NewRight[] = [];
  for (const g of after) {
    if (!g.scopeDns.length) continue; // a scope outside every managed OU reaches nothing
    const gDirect = direct(g, approvals);
    const covered = before.some((b) => coversScope(b, g) && [...g.permissions].every((p) => b.permissions.has(p)) && gDirect.every((p) => direct(b, approvals).includes(p)));
    if (covered) continue;
    const scoped = before.filter((b) => coversScope(b, g));
    const lacking = [...g.permissions].filter((p) => !scoped.some((b) => b.permissions.has(p) && (!gDirect.includes(p) || direct(b, approvals).includes(p))));
    out.push({ delegation: g.delegationId, permissions: lacking.length ? lacking : [...g.permissions], scope: g.scopeDns });
  }
  return out;
}

/**
 * The rights `writes` would add to this operator's, committed on `state` (empty: the change does
 * not widen them). A Super administrator already holds every right on every managed OU.
 */
export async function newRightsOf(dc: DecisionContext, settings: InstanceSettings, operator: OperatorFacts, state: AuthzState, writes: AuthzWrite[], approvals: ApprovalSettings): Promise<NewRight[]> {
  if (!writes.length) return [];
  const now = rightsFrom(settings, operator, [...state.roles.values()].map((r) => r.data), [...state.delegations.values()].map((d) => d.data));
  if (now.superAdministrator) return [];
  const next = applyAuthzWrites(state, writes);
  const then = rightsFrom(settings, operator, next.roles, next.delegations);
  const out = uncoveredGrants(await dc.grants(now), await dc.grants(then), approvals);
  // permissions decided without a scope (settings.manage, audit.read at the routes)
  const globalNew = [...then.permissions].filter((p) => !now.permissions.has(p) && !out.some((n) => n.permissions.includes(p)));
  for (const p of globalNew) {
    const from = then.grants.find((g) => g.role.permissions.includes(p));
    out.push({ delegation: from?.delegation.id ?? '', permissions: [p], scope: [] });
  }
  return out;
}
