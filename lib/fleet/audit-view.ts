import type { AuditChain, AuditRow } from '../audit';
import type { FleetAccess } from './access';

// GET /api/audit: administrators read the chain; a technician sees the rows filed under his
// clients plus his own actions, computed from the most recent 5 000 rows (spec: Audit entry).

export const TECHNICIAN_SCAN_LIMIT = 5000;

export type AuditEntry = Omit<AuditRow, 'prevHash' | 'hash'>;

function entry(row: AuditRow): AuditEntry {
  const { prevHash, hash, ...rest } = row as AuditRow & { _sk?: string };
  delete (rest as { _sk?: string })._sk;
  return rest;
}

const CLIENT_DETAILS = ['client', 'from'] as const;

/**
 * A row as a technician reads it: nothing names a client outside his scope, and a refusal of
 * an id out of his scope reads exactly like one of an unknown id (`not_found`, no client), so
 * his audit view does not reveal which hidden ids exist (spec: Server-side enforcement 3).
 */
export function redactForTechnician(row: AuditEntry, visible: Set<string>): AuditEntry {
  const out: AuditEntry = { ...row };
  if (out.reason === 'out_of_scope') out.reason = 'not_found';
  if (out.client && !visible.has(out.client)) delete out.client;
  if (out.details) {
    const details: Record<string, unknown> = { ...out.details };
    for (const k of CLIENT_DETAILS) if (typeof details[k] === 'string' && !visible.has(details[k] as string)) details[k] = null;
    if (Array.isArray(details.clients)) {
      const mine = details.clients.filter((c): c is string => typeof c === 'string' && visible.has(c));
      if (mine.length > 1) details.clients = mine;
      else delete details.clients; // one client or none: details.client says it
    }
    out.details = details;
  }
  return out;
}

export async function auditView(chain: AuditChain, access: FleetAccess, opts: { limit: number; beforeSeq?: number }) {
  const out: AuditEntry[] = [];
  const visible = access.visibleCodes();
  let scanned = 0;
  for await (const row of chain.rows({ reverse: true })) {
    if (visible && ++scanned > TECHNICIAN_SCAN_LIMIT) break;
    if (opts.beforeSeq !== undefined && row.seq >= opts.beforeSeq) continue;
    if (!visible) {
      out.push(entry(row));
    } else {
      const mine = row.actor?.name === access.identity.username && row.actor?.provider === access.identity.method;
      if ((row.client && visible.has(row.client)) || mine) out.push(redactForTechnician(entry(row), visible));
    }
    if (out.length >= opts.limit) break;
  }
  return { entries: out, ...(visible ? { scannedLimit: TECHNICIAN_SCAN_LIMIT } : {}) };
}
