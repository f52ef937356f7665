import type { ReactNode } from 'react';
import { ErrorText, Loading } from './states';

// Picking from a search, the shape of every picker dialog: the search field, "Searching…" while
// it runs, the candidates with a checkbox each, and what is picked so far in words.

export function PickList<T>({
  label,
  name,
  query,
  onQuery,
  searching,
  error,
  items,
  itemKey,
  itemLabel,
  isPicked,
  onToggle,
  nothing,
  listLabel = 'Candidates',
  summary,
}: {
  /** the search field's label ("Search members to add") */
  label: string;
  name: string;
  query: string;
  onQuery: (q: string) => void;
  searching?: boolean;
  error?: unknown;
  /** undefined: nothing searched yet */
  items: T[] | undefined;
  itemKey: (item: T) => string;
  itemLabel: (item: T) => ReactNode;
  isPicked: (item: T) => boolean;
  onToggle: (item: T) => void;
  /** what an empty answer says */
  nothing: string;
  listLabel?: string;
  /** what is picked so far, in words */
  summary?: ReactNode;
}) {
  return (
    <>
      <label className="search">
        {label}
        <input type="search" name={name} autoComplete="off" value={query} onChange={(e) => onQuery(e.target.value)} />
      </label>
      {searching && <Loading label="Searching…" />}
      <ErrorText error={error} />
      {!searching && items && (
        <ul className="plain" aria-label={listLabel}>
          {items.map((c) => (
            <li key={itemKey(c)}>
              <label className="check">
                <input type="checkbox" checked={isPicked(c)} onChange={() => onToggle(c)} />
                {itemLabel(c)}
              </label>
            </li>
          ))}
          {items.length === 0 && <li className="muted">{nothing}</li>}
        </ul>
      )}
      {summary}
    </>
  );
}
