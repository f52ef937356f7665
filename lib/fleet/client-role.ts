import type { AuditActor } from '../audit';
import { conflict } from '../errors';
import { CLIENT_ROLE_PREFIX } from './access';
import type { Client } from './clients';
import { ClusterCliError, parseJsonArray, type ClusterCli } from './cluster-cli';
import type { FleetRuntime } from './runtime';
import { yamlText } from './yaml-text';

// Per-client access roles (fleet spec, "Per-client access role (shape)"): role v7 named
// `fleet-client-<code>`, labelled `fleet-managed: 'true'` and `client_code: <code>`, granting RDP
// to the client's desktops (with the user's own windows_logins trait) and its applications
// (its console app `<code>-hdc` included) and nothing else. Created or refreshed through the
// cluster CLI (`tctl create`, `--force` to refresh), never replacing a role the fleet plane did
// not create unless asked (409 would_overwrite).

export const clientRoleName = (code: string) => `${CLIENT_ROLE_PREFIX}${code}`;
export const MANAGED_LABEL = 'fleet-managed';
/** tctl's trait placeholder: the user's own Windows logins */
export const WINDOWS_LOGINS_TRAIT = '{{internal.windows_logins}}';

export function clientRole(client: Pick<Client, 'code' | 'name'>) {
  return {
    kind: 'role',
    version: 'v7',
    metadata: {
      name: clientRoleName(client.code),
      description: `Fleet technician scope: client ${client.code} (${client.name}); RDP to its desktops and its apps only`,
      labels: { [MANAGED_LABEL]: 'true', client_code: client.code },
    },
    spec: {
      allow: {
        app_labels: { client_code: client.code },
        windows_desktop_labels: { client_code: client.code },
        windows_desktop_logins: [WINDOWS_LOGINS_TRAIT],
      },
      deny: {},
    },
  };
}

/** The role as `tctl create` takes it (what GET /api/clients/{code}/access-role shows): every string double-quoted (tctl reads YAML 1.1). */
export const clientRoleYaml = (client: Pick<Client, 'code' | 'name'>): string => yamlText(clientRole(client));

export type ExistingRole = { managed: boolean } | undefined;

/** The role of that name in the cluster (undefined: none); needs role read. */
export async function readClusterRole(cli: ClusterCli, name: string): Promise<ExistingRole> {
  let items: unknown[];
  try {
    items = parseJsonArray((await cli.run(['get', `role/${name}`, '--format=json'])).stdout);
  } catch (e) {
    if (e instanceof ClusterCliError && e.missing) return undefined;
    throw e;
  }
  const role = items.find((r: any) => r?.metadata?.name === name) as { metadata?: { labels?: Record<string, unknown> } } | undefined;
  if (!role) return undefined;
  return { managed: String(role.metadata?.labels?.[MANAGED_LABEL] ?? '') === 'true' };
}

export type RoleApplyOutcome = 'created' | 'refreshed' | 'replaced';

/**
 * Create the client's role, refresh it when the fleet plane made it, replace an unmanaged one
 * only with `overwrite` (else 409 would_overwrite). The YAML goes on tctl's standard input.
 */
export async function applyClientRole(cli: ClusterCli, client: Pick<Client, 'code' | 'name'>, overwrite: boolean): Promise<{ name: string; yaml: string; outcome: RoleApplyOutcome }> {
  const name = clientRoleName(client.code);
  const yaml = clientRoleYaml(client);
  for (let attempt = 0; ; attempt++) {
    const existing = await readClusterRole(cli, name);
    if (existing && !existing.managed && !overwrite) throw conflict('would_overwrite', { name });
    try {
      await cli.run(existing ? ['create', '--force'] : ['create'], { input: yaml });
      return { name, yaml, outcome: !existing ? 'created' : existing.managed ? 'refreshed' : 'replaced' };
    } catch (e) {
      // created by someone else between the read and the create: decide again on what is there now
      if (e instanceof ClusterCliError && e.exists && attempt === 0) continue;
      throw e;
    }
  }
}

/** The route's part: the change with its audit row `client.role.apply` (refusals and failures too). */
export async function applyClientRoleAudited(rt: FleetRuntime, client: Client, overwrite: boolean, by: { actor: AuditActor; correlationId: string }) {
  const name = clientRoleName(client.code);
  const base = { event: 'client.role.apply', actor: by.actor, client: client.code, target: { id: name, name, kind: 'role' }, correlationId: by.correlationId };
  try {
    const r = await applyClientRole(rt.cli, client, overwrite);
    await rt.audit.append({ ...base, outcome: 'success', details: { outcome: r.outcome, overwrite } });
    return r;
  } catch (e) {
    const code = (e as { code?: string }).code ?? 'internal_error';
    await rt.audit.append({ ...base, outcome: code === 'would_overwrite' ? 'denied' : 'error', reason: code, details: { overwrite } });
    throw e;
  }
}
