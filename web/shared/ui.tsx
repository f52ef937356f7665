import { useCallback, useEffect, useRef, useState } from 'react';

// The UI kit both web apps (web/console, web/fleet) import: the router, the app frame, dialogs
// (with focus return) and confirmations, lists that become cards on a phone, loading, empty and
// error states, the busy flag of an action, dates.

export { Link, RouterProvider, useRoute } from './router';
export { AppShell } from './shell';
export { ConfirmProvider, Modal, useConfirm, type ConfirmOptions } from './dialog';
export { Busy, Empty, ErrorState, ErrorText, Loaded, Loading, correlationOf } from './states';
export { DataTable, type Column } from './table';
export { AdminList, type EditorDone } from './admin-list';
export { FormDialog } from './form-dialog';
export { PickList } from './pick-list';
export { ago, when } from './format';

/** Run an async action with a busy flag and its error in words. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const run = useCallback(async <T,>(fn: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(undefined);
    try {
      return await fn();
    } catch (e) {
      setError(e);
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, setError, run };
}

/**
 * Load what one tab (or list) shows, again whenever `key` changes; an answer that arrives after
 * the user moved on is dropped, so a slow answer for the previous tab never fills the current one.
 * `reload()` asks again for the same key (Retry, or after a change).
 */
export function useLoaded<T>(key: string | undefined, load: (key: string) => Promise<T>): { data?: T; error?: unknown; loading: boolean; reload: () => void } {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: key !== undefined });
  const [round, setRound] = useState(0);
  const last = useRef(key);
  useEffect(() => {
    // another key: what the last one showed goes; the same key again (reload): it stays until the answer
    const same = last.current === key;
    last.current = key;
    setState((s) => ({ data: same ? s.data : undefined, loading: key !== undefined }));
    if (key === undefined) return;
    let current = true;
    load(key).then(
      (data) => current && setState({ data, loading: false }),
      (error: unknown) => current && setState((s) => ({ data: same ? s.data : undefined, error, loading: false })),
    );
    return () => {
      current = false;
    };
    // `load` is a new function on every render: the key (and a reload) alone decide when to load again
  }, [key, round]);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  return { ...state, reload };
}
