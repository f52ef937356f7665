import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from 'react';

// The router of both apps: the History API, no library.

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
