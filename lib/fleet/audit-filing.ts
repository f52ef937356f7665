import type { AuditInput } from '../audit';
import type { FleetRuntime } from './runtime';

/**
 * A fleet audit row is filed under one client (its `client`, inside the hash): that client's
 * technicians read it. An action covering several clients (an inventory export of several, a
 * lock of a gateway serving several) is filed under each of them: one row per client, the same
 * correlation id, `details` saying only what concerned that client; what concerned no client
 * (null) gets a row without client, for administrators. No client at all: one row without.
 */
export async function appendUnderEachClient(
  rt: FleetRuntime,
  input: Omit<AuditInput, 'client'>,
  clients: Array<string | null>,
  detailsOf?: (client: string | null) => Record<string, unknown> | undefined,
): Promise<void> {
  const entries = [...new Set(clients.length ? clients : [null])].sort((a, b) => (a ?? '\uffff').localeCompare(b ?? '\uffff'));
  for (const client of entries) {
    const details = { ...input.details, ...detailsOf?.(client) };
    await rt.audit.append({ ...input, ...(client ? { client } : {}), ...(Object.keys(details).length ? { details } : {}) });
  }
}
