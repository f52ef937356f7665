import type { Proxy } from './nodes';
import type { NodeRow } from './node-list';

// GET /api/nodes/inventory: one CSV line per Windows desktop of the listed proxies (a proxy
// without desktops still gets one line). Every cell is neutralised against spreadsheet formula
// injection: a cell starting with = + - @ tab or CR is prefixed with a quote.

export const INVENTORY_COLUMNS = [
  'client_code',
  'client_name',
  'proxy_id',
  'proxy_hostname',
  'proxy_kind',
  'proxy_version',
  'proxy_status',
  'proxy_last_seen',
  'proxy_locked',
  'desktop_name',
  'desktop_addr',
  'desktop_domain',
] as const;

export function neutralise(value: string): string {
  return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}

export function csvCell(value: string | number | boolean | null | undefined): string {
  const s = neutralise(value === null || value === undefined ? '' : String(value));
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function inventoryCsv(rows: NodeRow[], proxiesById: Map<string, Proxy>): { csv: string; lines: number } {
  const out = [INVENTORY_COLUMNS.join(',')];
  for (const r of rows) {
    const head = [r.clientCode, r.clientName, r.id, r.hostname, r.kind, r.version, r.status, r.lastSeen, r.locked];
    const desktops = proxiesById.get(r.id)?.desktops ?? [];
    if (desktops.length === 0) out.push([...head, '', '', ''].map(csvCell).join(','));
    for (const d of desktops) out.push([...head, d.name, d.addr, d.domain].map(csvCell).join(','));
  }
  return { csv: `${out.join('\r\n')}\r\n`, lines: out.length - 1 };
}
