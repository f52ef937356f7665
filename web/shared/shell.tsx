import { useEffect, useState, type ReactNode } from 'react';
import { useRoute } from './router';

// The frame of both apps: the top bar (name, what the bar shows, Sign out), the sections, the
// page. On a phone the sections fold behind a Menu button and the bar wraps: nothing is wider
// than the screen, Sign out stays on screen.

export function AppShell({ brand, bar, nav, children, inert }: { brand: ReactNode; bar: ReactNode; nav: ReactNode; children: ReactNode; inert?: boolean }) {
  const [open, setOpen] = useState(false);
  const { path } = useRoute();
  useEffect(() => setOpen(false), [path]);
  return (
    <>
      <a href="#main" className="skip">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand" data-testid="instance-title">
          {brand}
        </span>
        <button type="button" className="ghost menu" aria-expanded={open} aria-controls="sections" onClick={() => setOpen(!open)}>
          Menu
        </button>
        <div className="bar">{bar}</div>
      </header>
      <div className="layout">
        <nav id="sections" aria-label="Sections" className={open ? 'open' : undefined}>
          {nav}
        </nav>
        <main id="main" tabIndex={-1} inert={inert || undefined}>
          {children}
        </main>
      </div>
    </>
  );
}
