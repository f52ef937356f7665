import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from 'react';
import { get } from './api';
import { useRoute } from './ui';

// The number of requests waiting for the operator (the nav badge, the inbox tabs): read on every
// page change, every minute, and at once after an approval, a rejection or a new request, so the
// badge is never stale.

export interface ApprovalCount {
  toApprove: number;
  minePending: number;
}
const Ctx = createContext<{ count?: ApprovalCount; refresh: () => void }>({ refresh: () => undefined });
export const useApprovalCount = () => useContext(Ctx);

export function ApprovalCountProvider({ children }: { children: ReactNode }) {
  const [count, setCount] = useState<ApprovalCount>();
  const { path } = useRoute();
  const refresh = useCallback(() => {
    get<ApprovalCount>('/api/approvals/count').then(setCount, () => undefined);
  }, []);
  useEffect(refresh, [path, refresh]);
  useEffect(() => {
    const t = setInterval(() => document.visibilityState === 'visible' && refresh(), 60_000);
    return () => clearInterval(t);
  }, [refresh]);
  return <Ctx.Provider value={{ count, refresh }}>{children}</Ctx.Provider>;
}
