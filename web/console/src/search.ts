import { useEffect, useState } from 'react';
import { get, qs } from './api';

interface Page<T> {
  items: T[];
  truncated: boolean;
  incomplete: boolean;
  cursor?: string;
}

/**
 * Type-ahead search, after a short pause in typing; each answer replaces the list (no cache).
 * `searching` is true from the first key typed until the answer for it: the list shown is then
 * the previous search's, marked stale (issue 29: never old results under a new query unmarked).
 */
export function useSearch<T>(path: string, q: string, extra: Record<string, string | undefined> = {}) {
  const [items, setItems] = useState<T[]>();
  const [more, setMore] = useState<{ truncated: boolean; incomplete: boolean; cursor?: string }>({ truncated: false, incomplete: false });
  const [error, setError] = useState<unknown>();
  const [round, setRound] = useState(0);
  const key = JSON.stringify(extra);
  // what the list shown answers: the search is running (and the list stale) from the render that
  // changed the query, not from the effect after it
  const asked = JSON.stringify([path, q.trim(), key, round]);
  const [answered, setAnswered] = useState<string>();
  const searching = answered !== asked;
  useEffect(() => {
    let live = true;
    const t = setTimeout(async () => {
      try {
        const r = await get<Page<T>>(`${path}${qs({ q: q.trim(), ...extra })}`);
        if (!live) return;
        setItems(r.items);
        setMore(r);
        setError(undefined);
      } catch (e) {
        if (live) setError(e);
      } finally {
        if (live) setAnswered(asked);
      }
    }, 250);
    return () => {
      live = false;
      clearTimeout(t);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [asked]);
  const loadMore = async () => {
    if (!more.cursor) return;
    try {
      const r = await get<Page<T>>(`${path}${qs({ cursor: more.cursor })}`);
      setItems((old) => [...(old ?? []), ...r.items]);
      setMore(r);
    } catch (e) {
      setError(e);
    }
  };
  return { items, more, error, searching, loadMore, retry: () => setRound((r) => r + 1) };
}
