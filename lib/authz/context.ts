import type { AppendOptions, AuditInput } from '../audit';
import type { Config } from '../config';
import type { Directory, DirectoryCredentials } from '../directory';
import { protectedGroupSidsOf, type InstanceSettings, type ManagedOu } from '../setup/settings';
import type { Store } from '../store';
import type { ApprovalRules } from './approval-rules';
import { currentClassification, isAtOrBelow, type ClassificationContext } from './classify';
import { PERMISSIONS, SUPER_ADMINISTRATOR_ROLE, type Permission } from './permissions';
import type { OperatorRights } from './rights';

// What one request's decisions stand on, passed in by the caller (the console's composition root:
// lib/runtime.ts): the directory, the instance settings, the approval rules, and where decisions
// and actions are recorded. The engine reads no HTTP request, session or settings record itself.

/** The operator a decision is about (the signed-in identity, read fresh from the directory at sign-in). */
export interface OperatorRef {
  guid: string;
  username: string;
  provider: string;
  /** other directory accounts that are the operator's own (access platform: every account its claims name) */
  ownGuids?: string[];
}

/** Is this directory object one of the operator's own accounts? (nobody acts on their own account) */
export const isOwnAccount = (op: OperatorRef, guid: string) => [op.guid, ...(op.ownGuids ?? [])].some((g) => g.toLowerCase() === guid.toLowerCase());

/** What decisions and the actions built on them need of the host: config, store, the audit chain, the write account. */
export interface DecisionHost {
  config: Config;
  store: Store;
  audit: { append(row: AuditInput, opts?: AppendOptions): Promise<unknown> };
  /** The console's write account (group members, user attributes, account state). */
  writeCreds(): Promise<DirectoryCredentials>;
}

/** A grant resolved for this request: its permissions and its scope OUs at their current DN. */
export interface ScopedGrant {
  delegationId: string;
  permissions: Set<Permission>;
  scopeDns: string[];
}

export class DecisionContext<H extends DecisionHost = DecisionHost> {
  private ouDns = new Map<string, Promise<string | undefined>>();
  private approvals?: Promise<ApprovalRules>;
  constructor(
    readonly rt: H,
    readonly dir: Directory,
    readonly settings: InstanceSettings,
    private readonly loadApprovalRules: () => Promise<ApprovalRules>,
  ) {}

  /** The current DN of an OU given by GUID (moved or renamed OUs follow; a deleted one matches nothing); read once per request. */
  ouDn(ou: ManagedOu): Promise<string | undefined> {
    let dn = this.ouDns.get(ou.guid);
    if (!dn) {
      dn = this.dir.dnOfGuid(ou.guid);
      dn.catch(() => this.ouDns.delete(ou.guid));
      this.ouDns.set(ou.guid, dn);
    }
    return dn;
  }

  /** Approval rules, read once per decision context. */
  approvalSettings(): Promise<ApprovalRules> {
    return (this.approvals ??= this.loadApprovalRules());
  }

  classificationContext(): Promise<ClassificationContext> {
    return currentClassification(this.settings, protectedGroupSidsOf(this.settings), (o) => this.ouDn(o));
  }

  async grants(rights: OperatorRights): Promise<ScopedGrant[]> {
    const out: ScopedGrant[] = [];
    if (rights.superAdministrator) {
      const dns = await Promise.all(this.settings.managedOus.map((o) => this.ouDn(o)));
      out.push({ delegationId: SUPER_ADMINISTRATOR_ROLE.id, permissions: new Set(PERMISSIONS), scopeDns: dns.filter((d): d is string => !!d) });
    }
    const [managed, scopes] = await Promise.all([
      this.classificationContext().then((c) => c.managedOuDns),
      Promise.all(rights.grants.map(async (g) => (await Promise.all(g.delegation.scope.map((o) => this.ouDn(o)))).filter((d): d is string => !!d))),
    ]);
    rights.grants.forEach((g, i) => {
      // a delegation never reaches past the managed OUs, whatever its scope says
      const inside = scopes[i].filter((d) => managed.some((m) => isAtOrBelow(d, m)));
      out.push({ delegationId: g.delegation.id, permissions: new Set(g.role.permissions), scopeDns: inside });
    });
    return out;
  }
}
