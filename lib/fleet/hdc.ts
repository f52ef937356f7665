import { X509Certificate } from 'node:crypto';
import { z } from 'zod';
import { badRequest, notFound } from '../errors';
import { clientRoleName, clientRoleYaml } from './client-role';
import { clientCodeSchema, getClient, listClients } from './clients';
import { getConsole, listConsoles, type ConsoleRecord } from './consoles';
import { STATUS_PATH } from './poll/status';
import type { Acting } from './register';
import type { FleetRuntime } from './runtime';
import { withDrift } from './upgrades';
import { yamlText } from './yaml-text';

// The console integration routes (/api/hdc/*) and the cluster bundle: administrators only
// (fleet spec, Levels). The spec gives no shape: docs/decisions.md "Issue 31: /api/hdc/* and the
// cluster bundle". Both are reads of what the fleet plane already holds: a console's registration
// as the fleet polls it (never its token), and the cluster-side files a new client needs.

/** The console's application in the access platform (what `fleet-client-<code>` roles reach). */
export const consoleAppName = (clientCode: string) => `${clientCode}-hdc`;
/** A client's agent update group (spec: Versioning 3). */
export const updateGroupName = (clientCode: string) => `client-${clientCode}`;

function caFacts(pem: string | undefined) {
  if (!pem) return null;
  try {
    const c = new X509Certificate(pem);
    return { subject: c.subject, validTo: new Date(c.validTo).toISOString(), fingerprint256: c.fingerprint256 };
  } catch {
    return null; // checked at registration; a record that no longer parses shows as no CA
  }
}

/** One console's registration as the fleet plane holds it and polls it. */
async function registrations(rt: FleetRuntime, consoles: ConsoleRecord[]) {
  const names = new Map((await listClients(rt.store)).map((c) => [c.code, c.name]));
  const withPoll = await withDrift(rt.store, consoles);
  return withPoll.map((c) => ({
    id: c.id,
    clientCode: c.clientCode,
    clientName: names.get(c.clientCode) ?? null,
    consoleUrl: c.url,
    statusUrl: `${c.url}${STATUS_PATH}`,
    appName: consoleAppName(c.clientCode),
    clientRole: clientRoleName(c.clientCode),
    tokenSet: !!c.sealedToken,
    ca: caFacts(c.ca),
    registeredAt: c.createdAt,
    updatedAt: c.updatedAt,
    version: c.version,
    drift: c.drift,
    poll: c.poll,
  }));
}

/** GET /api/hdc/consoles: every registered console's integration, all clients. */
export const consoleRegistrations = async (rt: FleetRuntime) => ({ consoles: await registrations(rt, await listConsoles(rt.store)) });

/** GET /api/hdc/consoles/{id}/registration: one console's (404 when unknown). */
export async function consoleRegistration(rt: FleetRuntime, id: string) {
  const c = await getConsole(rt.store, id);
  if (!c) throw notFound();
  return (await registrations(rt, [c]))[0];
}

// ---- the cluster bundle ----

export const clusterBundleSchema = z.object({ clientCode: clientCodeSchema });

/**
 * The cluster-side files of a new client (POST /api/bundles/cluster): its access role
 * `fleet-client-<code>`, its agent update group `client-<code>` for autoupdate_config, and the
 * steps. No secret (join tokens stay with /api/bundles/proxy-token). Audited `bundle.cluster`.
 */
export async function clusterBundle(rt: FleetRuntime, clientCode: string, by: Acting) {
  const client = await getClient(rt.store, clientCode);
  if (!client) throw badRequest('unknown_client', { codes: [clientCode] }); // as the console instance bundle
  const group = updateGroupName(client.code);
  const role = clientRoleName(client.code);
  const schedule = yamlText([{ name: group, days: ['Mon', 'Tue', 'Wed', 'Thu'], start_hour: 2 }]);
  await rt.audit.append({ event: 'bundle.cluster', outcome: 'success', actor: by.actor, client: client.code, correlationId: by.correlationId, target: { id: client.code, name: client.name, kind: 'cluster-bundle' } });
  return {
    clientCode: client.code,
    role,
    updateGroup: group,
    appName: consoleAppName(client.code),
    files: [
      { path: `${role}.yaml`, content: clientRoleYaml(client) },
      { path: 'autoupdate-group.yaml', content: `# add to autoupdate_config spec.agents.schedules.regular (tctl edit autoupdate_config); days and hour are a suggestion\n${schedule}` },
      {
        path: 'README.md',
        content: [
          `# ${client.name} (${client.code}) in the cluster`,
          '',
          `1. Create the access role: \`tctl create -f ${role}.yaml\` (or POST /api/clients/${client.code}/access-role). It grants RDP to desktops and the apps labelled \`client_code: ${client.code}\`, the console \`${consoleAppName(client.code)}\` included.`,
          `2. Add the update group \`${group}\` of autoupdate-group.yaml to the rollout schedule; an agent whose group is not scheduled is never updated automatically.`,
          `3. Join the client's agents with a token from the fleet plane (POST /api/bundles/proxy-token, clientCode ${client.code}), label their desktops \`client_code: ${client.code}\` and enrol them in the group: \`teleport-update enable --group ${group}\`.`,
          '',
        ].join('\n'),
      },
    ],
  };
}
