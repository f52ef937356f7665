import { useCallback, useEffect, useRef, useState } from 'react';

// Screens poll the same filtered GET routes (the spec has no SSE or WebSocket channel). Polling
// pauses while the tab is hidden and reads again at once when it shows.
export const POLL_MS = 30_000;

export function usePolled<T>(load: () => Promise<T>, deps: unknown[], every = POLL_MS) {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<unknown>();
  const [loading, setLoading] = useState(true);
  const seq = useRef(0);
  // eslint-disable-next-line react-hooks/exhaustive-deps
  const fetchNow = useCallback(load, deps);
  const refresh = useCallback(async () => {
    const mine = ++seq.current;
    setLoading(true);
    try {
      const d = await fetchNow();
      if (mine === seq.current) {
        setData(d);
        setError(undefined);
      }
    } catch (e) {
      if (mine === seq.current) setError(e);
    } finally {
      if (mine === seq.current) setLoading(false);
    }
  }, [fetchNow]);
  useEffect(() => {
    void refresh();
    let timer: ReturnType<typeof setInterval> | undefined;
    const start = () => {
      clearInterval(timer);
      timer = setInterval(() => void refresh(), every);
    };
    const onVisibility = () => {
      if (document.visibilityState === 'hidden') clearInterval(timer);
      else {
        void refresh();
        start();
      }
    };
    if (document.visibilityState !== 'hidden') start();
    document.addEventListener('visibilitychange', onVisibility);
    return () => {
      clearInterval(timer);
      document.removeEventListener('visibilitychange', onVisibility);
    };
  }, [refresh, every]);
  return { data, error, loading, refresh };
}
