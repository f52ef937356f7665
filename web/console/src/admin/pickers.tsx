import { useEffect, useState } from 'react';
import { get, qs } from '../api';
import { Empty, ErrorState, Loaded, Loading, useLoaded } from '../ui';

// What administrators pick instead of typing DNs and GUIDs (issue 29): OUs from the tree of the
// managed OUs (GET /api/admin/directory/ous), users and security groups from a search of the
// directory (GET /api/admin/directory/principals). Values are GUIDs: what the API resolves again.

export interface OuNode {
  guid: string;
  dn: string;
  name: string;
  path: string;
  depth: number;
}
export interface Principal {
  kind: 'user' | 'group';
  guid: string;
  name: string;
  displayName?: string | null;
  where?: string;
}

const lower = (s: string) => s.toLowerCase();

/** The OU tree with a checkbox per OU and a filter; `value` holds OU GUIDs. */
export function OuTreePicker({ value, onChange, legend }: { value: string[]; onChange: (v: string[]) => void; legend: string }) {
  const { data, error, reload } = useLoaded('ous', () => get<{ ous: OuNode[]; truncated: boolean }>('/api/admin/directory/ous'));
  const [filter, setFilter] = useState('');
  const chosen = new Set(value.map(lower));
  return (
    <fieldset className="picker">
      <legend>{legend}</legend>
      <Loaded data={data} error={error} onRetry={reload} loading="Reading the OUs…">
        {({ ous, truncated }) => {
          const f = filter.trim().toLowerCase();
          const shown = f ? ous.filter((o) => o.path.toLowerCase().includes(f)) : ous;
          return (
            <>
              <label>
                Filter the OUs
                <input type="search" name="ou-filter" value={filter} onChange={(e) => setFilter(e.target.value)} />
              </label>
              <p className="hint" data-testid="picked-ous">
                {value.length ? `Chosen: ${ous.filter((o) => chosen.has(lower(o.guid))).map((o) => o.path).join('; ') || `${value.length} OU(s)`}` : 'No OU chosen yet.'}
              </p>
              {shown.length === 0 ? (
                <Empty>No OU matches.</Empty>
              ) : (
                <ul className="plain tree" aria-label="OUs">
                  {shown.map((o) => (
                    <li key={o.guid} style={{ paddingLeft: `${f ? 0 : o.depth * 1.2}em` }}>
                      <label className="check">
                        <input type="checkbox" checked={chosen.has(lower(o.guid))} onChange={(e) => onChange(e.target.checked ? [...value, o.guid] : value.filter((x) => lower(x) !== lower(o.guid)))} />
                        {f ? o.path : o.name}
                      </label>
                    </li>
                  ))}
                </ul>
              )}
              {truncated && <p className="hint">Only the first OUs are listed: filter to find the others.</p>}
            </>
          );
        }}
      </Loaded>
    </fieldset>
  );
}

/** A search of the directory's users (and security groups) with the chosen ones listed apart. */
export function PrincipalPicker({ value, onChange, legend, kinds = ['user', 'group'] }: { value: Principal[]; onChange: (v: Principal[]) => void; legend: string; kinds?: Array<'user' | 'group'> }) {
  const [q, setQ] = useState('');
  const [hits, setHits] = useState<{ items: Principal[]; truncated: boolean }>();
  const [error, setError] = useState<unknown>();
  const [searching, setSearching] = useState(false);
  useEffect(() => {
    if (q.trim().length < 2) {
      setHits(undefined);
      return;
    }
    let live = true;
    setSearching(true);
    const t = setTimeout(() => {
      get<{ items: Principal[]; truncated: boolean }>(`/api/admin/directory/principals${qs({ q: q.trim() })}`).then(
        (r) => live && (setHits(r), setError(undefined)),
        (e) => live && setError(e),
      ).finally(() => live && setSearching(false));
    }, 250);
    return () => {
      live = false;
      clearTimeout(t);
    };
  }, [q]);
  const has = (p: Principal) => value.some((x) => lower(x.guid) === lower(p.guid));
  const label = (p: Principal) => `${p.displayName ? `${p.displayName} (${p.name})` : p.name}${p.kind === 'group' ? ', group' : ''}`;
  const found = (hits?.items ?? []).filter((p) => kinds.includes(p.kind));
  return (
    <fieldset className="picker">
      <legend>{legend}</legend>
      {value.length === 0 ? (
        <p className="hint">Nobody chosen yet.</p>
      ) : (
        <ul className="plain" aria-label="Chosen">
          {value.map((p) => (
            <li key={p.guid}>
              {label(p)}{' '}
              <button type="button" className="link" onClick={() => onChange(value.filter((x) => x !== p))}>
                Remove<span className="sr-only"> {label(p)}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
      <label>
        Find {kinds.length === 2 ? 'a user or a security group' : kinds[0] === 'user' ? 'a user' : 'a security group'}
        <input type="search" name="principal-search" autoComplete="off" placeholder="Login or name, 2 letters at least" value={q} onChange={(e) => setQ(e.target.value)} />
      </label>
      {searching && <Loading label="Searching the directory…" />}
      {error ? <ErrorState error={error} /> : null}
      {hits && !searching && (
        <ul className="plain" aria-label="Found">
          {found.map((p) => (
            <li key={p.guid}>
              <button type="button" className="link" disabled={has(p)} onClick={() => onChange([...value, p])}>
                Add {label(p)}
              </button>{' '}
              {p.where && <span className="muted">in {p.where}</span>}
            </li>
          ))}
          {found.length === 0 && <li className="muted">Nobody found.</li>}
          {hits.truncated && <li className="hint">More match: type more of the name.</li>}
        </ul>
      )}
    </fieldset>
  );
}
