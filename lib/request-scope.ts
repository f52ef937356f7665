import { AsyncLocalStorage } from 'node:async_hooks';

// Reads that every step of one request may share. The spec decides each request on fresh facts:
// fresh per request, not per step, so the pipeline, the guard and the route's decision read the
// instance settings (and the roles and delegations) once, and can start those reads together with
// the session's. A write of the same thing within the request forgets the shared read. Outside a
// request (scheduled jobs, the CLI, tests calling lib/ directly) every read is its own.
type Reads = Map<string, Promise<unknown>>;
const scope = new AsyncLocalStorage<Reads>();

/** Run one request's work with its own shared reads. */
export const inRequestScope = <T>(work: () => T): T => scope.run(new Map(), work);

/** `read()` once for the current request (started now if nobody asked yet); outside a request, read each time. */
export function readOncePerRequest<T>(key: string, read: () => Promise<T>): Promise<T> {
  const reads = scope.getStore();
  if (!reads) return read();
  let p = reads.get(key) as Promise<T> | undefined;
  if (!p) {
    p = read();
    p.catch(() => undefined); // started ahead of time and perhaps never awaited: not an unhandled rejection
    reads.set(key, p);
  }
  return p;
}

/** A read already started (e.g. one of a batch) becomes this request's read of `key`, unless one is shared already. */
export function shareRequestRead(key: string, read: Promise<unknown>): void {
  const reads = scope.getStore();
  if (!reads || reads.has(key)) return;
  read.catch(() => undefined);
  reads.set(key, read);
}

/** After a write: the next read in this request goes to the store again. */
export function forgetRequestRead(key: string): void {
  scope.getStore()?.delete(key);
}
