import { ResultCodeError } from 'ldapts';
import { ApiError } from '../errors';
import { DirectoryError, DirectoryInvalidCredentials } from './errors';
import { dcProblemOf, type DcProblem } from './probe';

// How the pool reads a failure (DirectoryPool): a fault of the DC (failover, cooldown, shared
// health) or the directory's answer (no failover), and what the fault says about the DC.

/** A DC left a message (or the whole operation) unanswered: frozen, overloaded or cut off. */
export class DirectoryNoAnswer extends Error {
  constructor(what: string) {
    super(`${what}: no answer in time`);
    this.name = 'DirectoryNoAnswer';
  }
}

// Server-side conditions that mean "this DC cannot serve now" rather than "this request is wrong".
const DC_FAULT_CODES = new Set([51 /* busy */, 52 /* unavailable */, 80 /* other */]);

export const isConnectionError = (e: unknown) =>
  !(e instanceof ApiError) && !(e instanceof DirectoryInvalidCredentials) && !(e instanceof DirectoryError) && (!(e instanceof ResultCodeError) || DC_FAULT_CODES.has((e as ResultCodeError).code));

// ldapts 8: "Connection timeout" (TCP/TLS connect), "<Request>: Operation timed out" (client `timeout`)
export const isUnanswered = (e: unknown) =>
  e instanceof DirectoryNoAnswer || (e instanceof Error && /Operation timed out|^Connection timeout$/.test(e.message));

/** What a failure says about the DC (logged, and shared with the other instances). */
export const problemOf = (e: unknown): DcProblem => (isUnanswered(e) ? 'no_answer' : dcProblemOf(e));

/** The directory answered and refused: the one directory error domain code sees (no failover). */
export const asAnswer = (e: unknown) => (e instanceof ResultCodeError && !DC_FAULT_CODES.has(e.code) ? new DirectoryError(e.code, e.message) : e);

