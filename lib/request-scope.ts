import { AsyncLocalStorage } from 'node:async_hooks';

// Reads that every step of one request may share. The spec decides each request on fresh facts:
// fresh per request, not per step, so the pipeline, the guard and the route's decision read the
// instance settings (and the roles and delegations) once, and can start those reads together with
// the session's. A write of the same thing within the request forgets the shared read. Outside a
// request (scheduled jobs, the CLI, tests calling lib/ directly) every read is its own.
// A read request also carries its deadline (issue 28): every directory read it starts is given
// what is left of it, so a request never outlives its answer budget waiting for a slow DC.
type Reads = Map<string, Promise<unknown>>;
interface Scope {
  reads: Reads;
  deadline?: RequestDeadline;
}
export interface RequestDeadline {
  /** epoch ms after which the request is answered 503 `overloaded` (reason `deadline`) */
  at: number;
  /** Retry-After of that refusal (whole seconds) */
  retryAfterSeconds: number;
}
const scope = new AsyncLocalStorage<Scope>();

/** Run one request's work with its own shared reads. */
export const inRequestScope = <T>(work: () => T): T => scope.run({ reads: new Map() }, work);

/** From now on, this request's directory reads end at `deadline` (the pipeline sets it for reads). */
export function setRequestDeadline(deadline: RequestDeadline | undefined): void {
  const s = scope.getStore();
  if (s) s.deadline = deadline;
}

/** The current request's deadline; undefined outside a request or for a request without one. */
export const requestDeadline = (): RequestDeadline | undefined => scope.getStore()?.deadline;

/** `read()` once for the current request (started now if nobody asked yet); outside a request, read each time. */
export function readOncePerRequest<T>(key: string, read: () => Promise<T>): Promise<T> {
  const reads = scope.getStore()?.reads;
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
  const reads = scope.getStore()?.reads;
  if (!reads || reads.has(key)) return;
  read.catch(() => undefined);
  reads.set(key, read);
}

/** After a write: the next read in this request goes to the store again. */
export function forgetRequestRead(key: string): void {
  scope.getStore()?.reads.delete(key);
}
