import type { ReactNode } from 'react';

// The list of both apps: a table on a wide screen, a card per row on a phone (styles.css: each
// cell then shows its column's name from data-label), never wider than the screen.

export interface Column<T> {
  header: ReactNode;
  cell: (row: T) => ReactNode;
  /** the column's name on a phone card (defaults to the header when it is text; '' shows none) */
  label?: string;
  className?: string;
}

export function DataTable<T>({
  caption,
  columns,
  rows,
  rowKey,
  empty,
  testId,
  rowTestId,
  busy,
  className,
}: {
  caption: string;
  columns: Array<Column<T> | false | undefined>;
  rows: T[];
  rowKey: (row: T) => string;
  /** what an empty list says */
  empty: ReactNode;
  testId?: string;
  rowTestId?: (row: T) => string | undefined;
  /** a new answer is on its way: the rows shown are stale */
  busy?: boolean;
  className?: string;
}) {
  const cols = columns.filter((c): c is Column<T> => !!c);
  return (
    <table className={['data', busy ? 'stale' : '', className ?? ''].filter(Boolean).join(' ')} data-testid={testId} aria-busy={busy || undefined}>
      <caption className="sr-only">{caption}</caption>
      <thead>
        <tr>
          {cols.map((c, i) => (
            <th key={i} scope="col" className={c.className}>
              {c.header}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={rowKey(r)} data-testid={rowTestId?.(r)}>
            {cols.map((c, i) => (
              <td key={i} className={c.className} data-label={c.label ?? (typeof c.header === 'string' ? c.header : '')}>
                <div className="v">{c.cell(r)}</div>
              </td>
            ))}
          </tr>
        ))}
        {rows.length === 0 && (
          <tr>
            <td colSpan={cols.length} data-label="" className="empty-row">
              {empty}
            </td>
          </tr>
        )}
      </tbody>
    </table>
  );
}
