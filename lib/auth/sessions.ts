import { constantTimeEqual, randomToken, sha256Hex } from '../crypto/seal';
import { isWriterBusy, nowSeconds, type Store } from '../store';
import { requestDeadline } from '../request-scope';
import { deleteRecord, getRecord, putRecord, queryRecords, type Rec } from '../store/records';

// Server-side sessions. The cookie carries a random id; the table stores only its SHA-256,
// so a copy of the database does not yield usable sessions.
export const SESSION_COOKIE = '__Host-hdc';

export interface OperatorIdentity {
  guid: string;
  dn: string;
  username: string;
  displayName?: string;
  sid: string;
  groupSids: string[];
  provider: 'ad' | 'access';
  factsAt: number; // epoch ms when the directory facts above were read
  /** access platform: every directory account its claims resolved to (all protected as its own) */
  ownGuids?: string[];
  /** access platform: SIDs of the groups its role/trait mappings make it a member of (kept across fact refreshes) */
  mappedGroupSids?: string[];
  /** access platform: the platform user and roles the session was created from */
  platform?: { username: string; roles: string[] };
}

export interface SessionData {
  csrfToken: string;
  createdAt: number; // epoch seconds
  lastSeenAt: number;
  expiresAt: number; // absolute end (epoch seconds), also the item's ttl
  /** absent on an anonymous pre-session (antiforgery before sign-in) */
  operator?: OperatorIdentity;
  stepUpAt?: number; // epoch seconds of the last step-up
  stepUpProof?: 'authenticator' | 'password' | 'access' | 'passkey';
  /** a passkey step-up: the action and target its assertion was made for (`<action> <target>`), until a strict step-up uses it */
  stepUpFor?: string;
}

export interface Session extends SessionData {
  id: string;
  version: number;
}

export interface SessionPolicy {
  idleSeconds: number;
  absoluteSeconds: number;
}

const PK = (id: string) => `SESSION#${sha256Hex(id)}`;
// An index of an operator's sessions (the hashed ids), so a reset of their authenticator can end
// them all; rows expire with their session.
const OPERATOR_SESSIONS = (guid: string) => `SESSIONS_OF#${guid.toLowerCase()}`;

export async function createSession(store: Store, policy: SessionPolicy, operator?: OperatorIdentity, extra: Partial<SessionData> = {}): Promise<Session> {
  const id = randomToken(32);
  const now = nowSeconds();
  const expiresAt = now + (operator ? policy.absoluteSeconds : 3600);
  const data: SessionData = { csrfToken: randomToken(32), createdAt: now, lastSeenAt: now, expiresAt, operator, ...extra };
  if (operator) await putRecord(store, OPERATOR_SESSIONS(operator.guid), sha256Hex(id), {}, { ttl: expiresAt });
  await putRecord(store, PK(id), 'SESSION', data, { expectVersion: 0, ttl: expiresAt });
  return { id, version: 1, ...data };
}

/** A session's item (a request's batch read names it: lib/http/middlewares/session.ts); no key for an id that cannot be one. */
export const sessionKey = (id: string | undefined) => (id && id.length <= 100 ? { pk: PK(id), sk: 'SESSION' } : undefined);

/** Load a live session (its item read here, or by the request's batch: `read`); an idle or too-old one is deleted and reads as absent. */
export async function loadSession(store: Store, id: string | undefined, policy: SessionPolicy, read?: Promise<Rec<unknown> | undefined>): Promise<Session | undefined> {
  if (!id || id.length > 100) return undefined;
  const rec = (await (read ?? getRecord<SessionData>(store, PK(id), 'SESSION'))) as Rec<SessionData> | undefined;
  if (!rec) return undefined;
  const now = nowSeconds();
  const s = rec.data;
  const idleLimit = s.operator ? policy.idleSeconds : 3600;
  if (now - s.lastSeenAt > idleLimit || now - s.createdAt > policy.absoluteSeconds || now >= s.expiresAt) {
    await deleteRecord(store, PK(id), 'SESSION');
    return undefined;
  }
  if (now - s.lastSeenAt >= 30) await slideIdleExpiry(store, id, s, now, idleLimit);
  return { id, version: rec.version, ...s };
}

/**
 * The sliding idle expiry, written at most every 30 s. A read's refresh waits for the store's
 * writer at most REFRESH_WAIT_MS (or until the read's deadline once half the idle limit has
 * passed), then is left to a later request: on SQLite the wait holds the worker thread, and under an
 * overload a refresh that waited seconds made the reads of that thread answer past their budget
 * (issue 28). A change (no deadline) always writes it.
 */
async function slideIdleExpiry(store: Store, id: string, s: SessionData, now: number, idleLimit: number): Promise<void> {
  const deadline = requestDeadline();
  const waitUntil = deadline && (now - s.lastSeenAt >= idleLimit / 2 ? deadline.at : Math.min(deadline.at, Date.now() + REFRESH_WAIT_MS));
  try {
    await putRecord(store, PK(id), 'SESSION', { ...s, lastSeenAt: now }, { ttl: s.expiresAt, waitUntil });
  } catch (e) {
    if (!isWriterBusy(e)) throw e;
  }
}
const REFRESH_WAIT_MS = 100;

export async function updateSession(store: Store, session: Session, patch: Partial<SessionData>): Promise<void> {
  const { id, version: _v, ...data } = session;
  await putRecord(store, PK(id), 'SESSION', { ...data, ...patch }, { ttl: data.expiresAt });
}

export async function destroySession(store: Store, id: string): Promise<void> {
  await deleteRecord(store, PK(id), 'SESSION');
}

/** End every session of an operator (authenticator reset); returns how many were live. */
export async function endOperatorSessions(store: Store, guid: string): Promise<number> {
  const rows = await queryRecords<unknown>(store, OPERATOR_SESSIONS(guid));
  let ended = 0;
  for (const row of rows) {
    if (await getRecord(store, `SESSION#${row.sk}`, 'SESSION')) ended++;
    await deleteRecord(store, `SESSION#${row.sk}`, 'SESSION');
    await deleteRecord(store, OPERATOR_SESSIONS(guid), row.sk);
  }
  return ended;
}

export function csrfMatches(session: Session | undefined, header: string | undefined): boolean {
  return !!session && !!header && constantTimeEqual(session.csrfToken, header);
}

/**
 * A browser session cookie (no Max-Age/Expires): closing the browser ends the sign-in on a shared
 * helpdesk workstation; the server's idle and absolute limits stay the authority on its lifetime.
 */
export function sessionCookie(id: string): string {
  return `${SESSION_COOKIE}=${id}; Path=/; Secure; HttpOnly; SameSite=Strict`;
}
export const clearedSessionCookie = () => `${SESSION_COOKIE}=; Path=/; Secure; HttpOnly; SameSite=Strict; Max-Age=0`;

export function readSessionCookie(cookies: string[] | undefined, header?: string): string | undefined {
  const all = [...(cookies ?? []), ...(header ? header.split(';') : [])];
  for (const c of all) {
    const [name, ...rest] = c.trim().split('=');
    if (name === SESSION_COOKIE) return rest.join('=');
  }
  return undefined;
}
