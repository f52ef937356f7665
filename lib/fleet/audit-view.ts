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

/**
 * A technician's own refusal on another client's resource would name that client: shown as the
 * not-found refusal it answered, so the audit view does not reveal what the 404 hid.
 */
function redactForeign(row: AuditEntry): AuditEntry {
  return {
    seq: row.seq,
    at: row.at,
    id: row.id,
    event: row.event,
    outcome: row.outcome,
    reason: row.reason === 'out_of_scope' ? 'not_found' : row.reason,
    actor: row.actor,
    correlationId: row.correlationId,
    details: { route: row.details?.route, requiredLevel: row.details?.requiredLevel, client: null },
  };
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
      if (row.client && visible.has(row.client)) out.push(entry(row));
      else if (mine) out.push(row.client ? redactForeign(entry(row)) : entry(row));
    }
    if (out.length >= opts.limit) break;
  }
  return { entries: out, ...(visible ? { scannedLimit: TECHNICIAN_SCAN_LIMIT } : {}) };
}
