import type { PeerCertificate } from '../../outbound/https';
import type { Store } from '../../store';
import { deleteRecord, getRecord, queryRecords, putRecord } from '../../store/records';
import { readConsoleStatus, type ConsoleStatus, type PollResult } from './status';

// Each console's last known state (pk POLLSTATE, sk <console id>), written after every poll:
// the last result, the consecutive failures, the last successful status (a failed poll keeps
// the version of the last successful one), the certificate presented, and the fleet's witness
// of the console's audit chain: the head (seq, hash) it last saw. A console whose chain no
// longer extends that head was rewritten after the fleet saw it (`rewrite`, kept until the
// console is removed: the off-box evidence must not be overwritten by the rewritten chain).

export const POLLSTATE_PK = 'POLLSTATE';

export interface AuditPoint {
  seq: number;
  hash: string;
}

export interface ConsolePollState {
  consoleId: string;
  /** the round of the last poll (rules decide only on data read this round) */
  roundId: string;
  polledAt: string;
  ok: boolean;
  ms: number;
  error?: string;
  httpStatus?: number;
  consecutiveFailures: number;
  lastSuccessAt?: string;
  /** the last successful status */
  status?: ConsoleStatus;
  cert?: PeerCertificate & { roundId: string; readAt: string };
  witness?: AuditPoint & { at: string };
  rewrite?: { detectedAt: string; witnessed: AuditPoint; reported: { seq: number; hash: string | null } };
}

/**
 * Does the reported chain still extend what the fleet witnessed? A head behind the witness
 * (rows deleted), or a different hash at the witnessed sequence, is a rewrite. A witnessed row
 * the console no longer has (purged by retention: `witness.hash` null, head past it) is not
 * evidence either way.
 */
export function witnessCheck(witnessed: AuditPoint | undefined, audit: ConsoleStatus['audit']): { rewritten: false } | { rewritten: true; reported: { seq: number; hash: string | null } } {
  const head = audit.head;
  if (!witnessed || !head) return { rewritten: false };
  if (head.seq < witnessed.seq) return { rewritten: true, reported: { seq: head.seq, hash: head.hash } };
  if (head.seq === witnessed.seq && head.hash !== witnessed.hash) return { rewritten: true, reported: { seq: head.seq, hash: head.hash } };
  const w = audit.witness;
  if (w && w.seq === witnessed.seq && w.hash !== null && w.hash !== witnessed.hash) return { rewritten: true, reported: { seq: w.seq, hash: w.hash } };
  return { rewritten: false };
}

/** The state after a poll of round `roundId` (pure). */
export function nextPollState(prev: ConsolePollState | undefined, consoleId: string, roundId: string, r: PollResult): ConsolePollState {
  const next: ConsolePollState = {
    consoleId,
    roundId,
    polledAt: r.at,
    ok: r.ok,
    ms: r.ms,
    consecutiveFailures: r.ok ? 0 : (prev?.consecutiveFailures ?? 0) + 1,
    ...(prev?.lastSuccessAt ? { lastSuccessAt: prev.lastSuccessAt } : {}),
    ...(prev?.status ? { status: prev.status } : {}),
    ...(prev?.cert ? { cert: prev.cert } : {}),
    ...(prev?.witness ? { witness: prev.witness } : {}),
    ...(prev?.rewrite ? { rewrite: prev.rewrite } : {}),
  };
  if (r.error) next.error = r.error;
  if (r.httpStatus) next.httpStatus = r.httpStatus;
  if (r.cert) next.cert = { ...r.cert, roundId, readAt: r.at };
  if (r.ok && r.status) {
    next.status = r.status;
    next.lastSuccessAt = r.at;
    const head = r.status.audit.head;
    if (!next.rewrite) {
      const w = witnessCheck(prev?.witness, r.status.audit);
      if (w.rewritten) next.rewrite = { detectedAt: r.at, witnessed: { seq: prev!.witness!.seq, hash: prev!.witness!.hash }, reported: w.reported };
      // the witness moves only along a chain the console itself verifies
      else if (head && r.status.audit.chain === 'ok') next.witness = { seq: head.seq, hash: head.hash, at: r.at };
    }
  }
  return next;
}

/** A stored state with its status held to today's patterns (a state written before them may hold a raw reported text). */
function checkedState(s: ConsolePollState): ConsolePollState {
  if (!s.status) return s;
  const status = readConsoleStatus(s.status);
  if (status) return { ...s, status };
  const { status: _unreadable, ...rest } = s;
  return rest;
}

export async function readPollStates(store: Store): Promise<Map<string, ConsolePollState>> {
  return new Map((await queryRecords<ConsolePollState>(store, POLLSTATE_PK)).map((r) => [r.sk, checkedState(r.data)]));
}

export async function readPollState(store: Store, consoleId: string): Promise<ConsolePollState | undefined> {
  const s = (await getRecord<ConsolePollState>(store, POLLSTATE_PK, consoleId))?.data;
  return s && checkedState(s);
}

export async function writePollState(store: Store, s: ConsolePollState): Promise<void> {
  await putRecord(store, POLLSTATE_PK, s.consoleId, s);
}

export async function deletePollState(store: Store, consoleId: string): Promise<void> {
  await deleteRecord(store, POLLSTATE_PK, consoleId);
}
