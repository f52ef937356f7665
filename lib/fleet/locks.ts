import { z } from 'zod';
import { plainText } from '../plain-text';
import { ApiError, conflict } from '../errors';
import { ClusterCliError, getResources, type ClusterCli } from './cluster-cli';
import { buildProxies, type Proxy } from './nodes';

// Lock and unlock a proxy through `tctl lock --server-id` and `tctl rm lock/<name>` (COMMANDS.md §2).

export const LOCK_DURATIONS = [1, 4, 12, 24, 72, 168] as const;
export const DEFAULT_LOCK_MESSAGE = 'Locked by the MSP fleet plane';

export const lockBodySchema = z.object({
  // hours, or 'none' for a lock without expiry; 24 by default (spec: Lock)
  duration: z.union([z.literal([...LOCK_DURATIONS]), z.literal('none')]).default(24),
  message: plainText().trim().max(200).optional(),
});
export type LockBody = z.output<typeof lockBodySchema>;

/** Why a node cannot be locked: Auth/Proxy (protected_service) or a kind without lock support. */
export function lockRefusal(p: Pick<Proxy, 'services' | 'kind'>): 'protected_service' | 'unsupported_kind' | undefined {
  if (p.services.includes('Auth') || p.services.includes('Proxy')) return 'protected_service';
  if (!['gateway', 'ssh', 'app'].includes(p.kind) || p.services.includes('Kube')) return 'unsupported_kind';
  return undefined;
}

export const protectedNode = (reason: string) => conflict('protected_node', { reason });

const CREATED = /Created a lock with name "([^"]+)"/;

/** Create the lock; `pending` when the cluster's lock list does not show it yet (cache lag). */
export async function lockNode(cli: ClusterCli, nodeId: string, body: LockBody): Promise<{ lockName: string | null; pending: boolean }> {
  const args = ['lock', `--server-id=${nodeId}`, `--message=${body.message || DEFAULT_LOCK_MESSAGE}`];
  if (body.duration !== 'none') args.push(`--ttl=${body.duration}h`);
  let stdout: string;
  try {
    ({ stdout } = await cli.run(args));
  } catch (e) {
    // the fleet role lacks create plus update on lock (UpsertLock needs both)
    if (e instanceof ClusterCliError && e.code === 'access_access_denied') throw new ApiError(502, 'lock_failed');
    throw e;
  }
  const lockName = CREATED.exec(stdout)?.[1] ?? null;
  const active = await activeLocksOf(cli, nodeId);
  return { lockName, pending: lockName ? !active.some((l) => l === lockName) : active.length === 0 };
}

export async function activeLocksOf(cli: ClusterCli, nodeId: string, now = Date.now()): Promise<string[]> {
  const locks = await getResources(cli, 'locks');
  const { proxies } = buildProxies({ instances: [{ metadata: { name: nodeId }, spec: {} }], desktopServices: [], desktops: [], locks }, now);
  return proxies[0]?.locks.map((l) => l.name) ?? [];
}

/** Remove every active lock on the node (spec: unlock removes all active locks). */
export async function unlockNode(cli: ClusterCli, nodeId: string): Promise<{ removed: string[] }> {
  const names = await activeLocksOf(cli, nodeId);
  for (const name of names) {
    try {
      await cli.run(['rm', `lock/${name}`]);
    } catch (e) {
      if (!(e instanceof ClusterCliError && e.missing)) throw e; // expired and removed meanwhile
    }
  }
  return { removed: names };
}
