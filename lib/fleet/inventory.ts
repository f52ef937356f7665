import type { ProxyWithDesktops } from './nodes';
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

/** Lines and proxies of an export per client ('' = lines without a client, administrators only). */
export type ExportCoverage = Map<string, { lines: number; proxies: number }>;

/**
 * The CSV of the listed proxies (already cut to the caller's scope: proxiesInScope). A desktop
 * line names the desktop's own client (a shared gateway serves several); a proxy without
 * desktops gets one line with the proxy's client.
 */
export function inventoryCsv(rows: NodeRow[], proxiesById: Map<string, ProxyWithDesktops>, clientNames: Map<string, string>): { csv: string; lines: number; coverage: ExportCoverage } {
  const out = [INVENTORY_COLUMNS.join(',')];
  const coverage: ExportCoverage = new Map();
  const push = (code: string | null, r: NodeRow, desktop: [string, string, string], firstOfProxy: boolean) => {
    out.push([code, code ? (clientNames.get(code) ?? null) : null, r.id, r.hostname, r.kind, r.version, r.status, r.lastSeen, r.locked, ...desktop].map(csvCell).join(','));
    const c = coverage.get(code ?? '') ?? { lines: 0, proxies: 0 };
    c.lines++;
    if (firstOfProxy) c.proxies++;
    coverage.set(code ?? '', c);
  };
  for (const r of rows) {
    const desktops = proxiesById.get(r.id)?.desktops ?? [];
    if (desktops.length === 0) push(r.clientCode, r, ['', '', ''], true);
    const counted = new Set<string | null>();
    for (const d of desktops) {
      push(d.clientCode, r, [d.name, d.addr, d.domain], !counted.has(d.clientCode));
      counted.add(d.clientCode);
    }
  }
  return { csv: `${out.join('\r\n')}\r\n`, lines: out.length - 1, coverage };
}
