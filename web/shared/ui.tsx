import { createContext, useCallback, useContext, useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { say } from './words';

// Pieces both web apps (web/console, web/fleet) use the same way: the modal dialog, an error in
// words, the busy flag of an action, the router (History API, no library), dates.

export function Modal({ title, onClose, children, wide }: { title: string; onClose: () => void; children: ReactNode; wide?: boolean }) {
  const ref = useRef<HTMLDialogElement>(null);
  const id = useId();
  useEffect(() => {
    const d = ref.current!;
    if (!d.open) d.showModal();
    return () => {
      if (d.open) d.close();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      className={wide ? 'wide' : undefined}
      aria-labelledby={id}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
    >
      <div className="dialog-head">
        <h2 id={id}>{title}</h2>
        <button type="button" className="ghost" aria-label="Close dialog" onClick={onClose}>
          ×
        </button>
      </div>
      {children}
    </dialog>
  );
}

export function ErrorText({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p role="alert" className="error">
      {say(error)}
    </p>
  );
}

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

// ---- router: the History API, no library -------------------------------------------------
const RouteCtx = createContext<{ path: string; go: (p: string, replace?: boolean) => void }>({ path: '/', go: () => undefined });
export function RouterProvider({ children }: { children: ReactNode }) {
  const [path, setPath] = useState(location.pathname + location.search);
  useEffect(() => {
    const on = () => setPath(location.pathname + location.search);
    addEventListener('popstate', on);
    return () => removeEventListener('popstate', on);
  }, []);
  const go = useCallback((p: string, replace = false) => {
    if (replace) history.replaceState(null, '', p);
    else history.pushState(null, '', p);
    setPath(p);
    scrollTo(0, 0);
  }, []);
  return <RouteCtx.Provider value={{ path, go }}>{children}</RouteCtx.Provider>;
}
export const useRoute = () => useContext(RouteCtx);
/**
 * A link of the app. It is the current page (aria-current) on its path and the paths below it,
 * unless `exact`; `alsoUnder` names other sections it stands for (the fleet's consoles under Clients).
 */
export function Link({ to, children, className, exact, alsoUnder }: { to: string; children: ReactNode; className?: string; exact?: boolean; alsoUnder?: string[] }) {
  const { go, path } = useRoute();
  const here = path.split('?')[0];
  const below = (p: string) => p !== '/' && here.startsWith(`${p}/`);
  const current = path === to || here === to || (!exact && below(to)) || (alsoUnder ?? []).some(below);
  return (
    <a
      href={to}
      className={className}
      aria-current={current ? 'page' : undefined}
      onClick={(e) => {
        if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        go(to);
      }}
    >
      {children}
    </a>
  );
}

export const when = (iso?: string | null) => (iso ? new Date(iso).toLocaleString() : '—');

/**
 * Load what one tab (or list) shows, again whenever `key` changes; an answer that arrives after
 * the user moved on is dropped, so a slow answer for the previous tab never fills the current one.
 */
export function useLoaded<T>(key: string | undefined, load: (key: string) => Promise<T>): { data?: T; error?: unknown } {
  const [state, setState] = useState<{ data?: T; error?: unknown }>({});
  useEffect(() => {
    setState({});
    if (key === undefined) return;
    let current = true;
    load(key).then(
      (data) => current && setState({ data }),
      (error: unknown) => current && setState({ error }),
    );
    return () => {
      current = false;
    };
    // `load` is a new function on every render: the key alone decides when to load again
  }, [key]);
  return state;
}
