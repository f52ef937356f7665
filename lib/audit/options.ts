import type { KeySource } from './signing';

export interface AuditChainOptions {
  now?: () => number;
  /** the master key: signs and checks the chain's state items */
  key?: KeySource;
  /** write the viewer's lookup items beside each row (the console) */
  lookups?: boolean;
  /** rows of the rolling sample re-hashed by each incremental check */
  sampleRows?: number;
  /** new rows verified by one incremental check at most (the rest waits for the next) */
  maxNewRows?: number;
}

