// Approval requests (console spec, Approval request; States and transitions), by concept: the
// record and its view (./record.ts), filing (./filing.ts), the state table (./transitions.ts), the
// execution and its jobs (./execution.ts), reading (./views.ts). Callers import from here.
export * from './record';
export * from './filing';
export * from './transitions';
export * from './execution';
export * from './views';
export * from './temporary';
