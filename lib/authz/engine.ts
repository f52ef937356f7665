import type { OperatorIdentity } from '../auth/sessions';
import type { Directory } from '../directory';
import { readObjectByGuid, type ObjectFacts } from '../directory/objects';
import type { ConsoleRuntime } from '../runtime';
import type { InstanceSettings, ManagedOu } from '../setup/settings';
import { classifyComputer, isBelow, type ClassificationContext, type ComputerClass } from './classify';
import type { Permission } from './permissions';
import { PERMISSIONS, SUPER_ADMINISTRATOR_ROLE } from './permissions';
import type { OperatorRights } from './rights';

// The one authorization decision of the console: operator, action, target GUID → allow or refuse
// with a reason, decided on fresh facts read from the directory by GUID, audited `authz.decision`.

export interface Actor {
  identity: OperatorIdentity;
  rights: OperatorRights;
  ip: string;
}

export type Decision =
  | { allowed: true; target: ObjectFacts; cls: ComputerClass; delegationId: string; vipManage: boolean; permissions: Set<Permission> }
  | { allowed: false; status: 404 | 403; reason: string; target?: ObjectFacts; cls?: ComputerClass };

/** A grant resolved for this request: its permissions and its scope OUs at their current DN. */
interface ScopedGrant {
  delegationId: string;
  permissions: Set<Permission>;
  scopeDns: string[];
}

export class DecisionContext {
  private ouDns = new Map<string, string | undefined>();
  constructor(
    readonly rt: ConsoleRuntime,
    readonly dir: Directory,
    readonly settings: InstanceSettings,
  ) {}

  /** The current DN of an OU given by GUID (moved or renamed OUs follow; a deleted one matches nothing). */
  async ouDn(ou: ManagedOu): Promise<string | undefined> {
    if (!this.ouDns.has(ou.guid)) this.ouDns.set(ou.guid, await this.dir.dnOfGuid(ou.guid));
    return this.ouDns.get(ou.guid);
  }

  async classificationContext(): Promise<ClassificationContext> {
    const managed = await Promise.all(this.settings.managedOus.map((o) => this.ouDn(o)));
    const tiers = await Promise.all(this.settings.tierOus.map((o) => this.ouDn(o)));
    return {
      managedOuDns: managed.filter((d): d is string => !!d),
      // a Tier OU that cannot be found any more still protects what sits at its recorded DN
      tierOuDns: this.settings.tierOus.map((o, i) => tiers[i] ?? o.dn),
      protectedGroupSids: this.settings.protectedGroups.map((g) => g.sid),
    };
  }

  async grants(rights: OperatorRights): Promise<ScopedGrant[]> {
    const out: ScopedGrant[] = [];
    if (rights.superAdministrator) {
      const dns = await Promise.all(this.settings.managedOus.map((o) => this.ouDn(o)));
      out.push({ delegationId: SUPER_ADMINISTRATOR_ROLE.id, permissions: new Set(PERMISSIONS), scopeDns: dns.filter((d): d is string => !!d) });
    }
    const managed = (await this.classificationContext()).managedOuDns;
    for (const g of rights.grants) {
      const dns = (await Promise.all(g.delegation.scope.map((o) => this.ouDn(o)))).filter((d): d is string => !!d);
      // a delegation never reaches past the managed OUs, whatever its scope says
      const inside = dns.filter((d) => managed.some((m) => d.toLowerCase() === m.toLowerCase() || isBelow(d, m)));
      out.push({ delegationId: g.delegation.id, permissions: new Set(g.role.permissions), scopeDns: inside });
    }
    return out;
  }
}

export async function decisionContext(rt: ConsoleRuntime): Promise<DecisionContext> {
  const settings = await rt.settings();
  if (!settings) throw new Error('not configured');
  return new DecisionContext(rt, await rt.directory(), settings);
}

const inScope = (dn: string, g: ScopedGrant) => g.scopeDns.some((s) => isBelow(dn, s));

/** Which of these permissions one delegation covering `dn` holds together (same-delegation rules). */
function bestGrant(grants: ScopedGrant[], dn: string, needs: Permission[]): ScopedGrant | undefined {
  return grants.find((g) => inScope(dn, g) && needs.every((p) => g.permissions.has(p)));
}

/**
 * decideOnComputer: `computers.read` needs the permission in a delegation covering the computer;
 * a LAPS action also needs `computers.read` in the same delegation, and `vip.manage` there too
 * for a protected computer. Never-manageable and unmanaged computers, and computers the operator
 * cannot read, answer like unknown ones (404).
 */
export async function decideOnComputer(
  ctx: DecisionContext,
  actor: Actor,
  action: Permission,
  guid: string,
  opts: { audit: boolean; correlationId: string },
): Promise<Decision> {
  const decision = await decide(ctx, actor, action, guid);
  if (opts.audit) {
    const t = decision.target;
    await ctx.rt.audit.append({
      event: 'authz.decision',
      outcome: decision.allowed ? 'allowed' : 'denied',
      reason: decision.allowed ? `delegation:${decision.delegationId}` : decision.reason,
      actor: { id: actor.identity.guid, name: actor.identity.username, provider: actor.identity.provider, ip: actor.ip },
      target: { id: guid, ...(t ? { name: String(t.attributes.cn ?? ''), dn: t.dn } : {}), kind: 'computer' },
      correlationId: opts.correlationId,
      details: { action, ...(decision.cls ? { class: decision.cls.kind === 'never' ? `never:${decision.cls.why}` : decision.cls.kind } : {}) },
    });
  }
  return decision;
}

async function decide(ctx: DecisionContext, actor: Actor, action: Permission, guid: string): Promise<Decision> {
  const target = await readObjectByGuid(ctx.dir, guid);
  if (!target) return { allowed: false, status: 404, reason: 'not_found' };
  const cls = classifyComputer(target, await ctx.classificationContext());
  if (cls.kind === 'never') return { allowed: false, status: 404, reason: `never_manageable:${cls.why}`, target, cls };
  if (cls.kind === 'unmanaged') return { allowed: false, status: 404, reason: 'out_of_scope', target, cls };
  const grants = await ctx.grants(actor.rights);
  if (!bestGrant(grants, target.dn, ['computers.read'])) return { allowed: false, status: 404, reason: 'out_of_scope', target, cls };
  const needs: Permission[] = action === 'computers.read' ? ['computers.read'] : ['computers.read', action];
  const vipNeeded = cls.kind === 'vip' && action !== 'computers.read';
  const grant = bestGrant(grants, target.dn, vipNeeded ? [...needs, 'vip.manage'] : needs);
  if (!grant) {
    const reason = vipNeeded && bestGrant(grants, target.dn, needs) ? 'vip_requires_vip_manage' : `missing_permission:${action}`;
    return { allowed: false, status: 403, reason, target, cls };
  }
  return { allowed: true, target, cls, delegationId: grant.delegationId, vipManage: grant.permissions.has('vip.manage'), permissions: grant.permissions };
}
