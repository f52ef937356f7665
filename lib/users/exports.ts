import { z } from 'zod';
import type { Actor, DecisionContext } from '../authz/engine';
import { isoToFileTime } from '../directory/objects';
import { notFound } from '../errors';
import { searchUsers, type UserView } from './index';

// Watch lists and the CSV exports of users (console spec, Audit events: `users.export`,
// `users.watch.export`, each with its row count). Every row is a user the operator may read
// (users.read, in scope, never-manageable accounts left out), exactly as the lists show them.

const DAY_MS = 86_400_000;

/** Watch lists: users of the operator's scope an operator keeps an eye on, at most Directory:MaxResults each. */
export const WATCH_LISTS = {
  'locked-out': { title: 'Locked out', filter: () => '(lockoutTime>=1)', keep: (u: UserView) => u.lockedOut },
  disabled: { title: 'Disabled accounts', filter: () => '(userAccountControl:1.2.840.113556.1.4.803:=2)', keep: () => true },
  'password-never-expires': { title: 'Password never expires', filter: () => '(userAccountControl:1.2.840.113556.1.4.803:=65536)', keep: () => true },
  // lastLogonTimestamp may lag up to about 14 days by design: 90 days is well past that
  'inactive-90-days': {
    title: 'No sign-in for 90 days',
    filter: (now: number) => `(&(!(userAccountControl:1.2.840.113556.1.4.803:=2))(|(!(lastLogonTimestamp=*))(lastLogonTimestamp<=${isoToFileTime(now - 90 * DAY_MS)})))`,
    keep: () => true,
  },
} as const;
export type WatchListId = keyof typeof WATCH_LISTS;
export const watchListParams = z.object({ list: z.string() });

const watchList = (id: string) => {
  if (!Object.hasOwn(WATCH_LISTS, id)) throw notFound();
  return WATCH_LISTS[id as WatchListId];
};

export const watchListsIndex = () => ({ lists: Object.entries(WATCH_LISTS).map(([id, l]) => ({ id, title: l.title })) });

/** One watch list: at most Directory:MaxResults (200) users, `truncated` when there are more. */
export async function readWatchList(ctx: DecisionContext, actor: Actor, id: string, masterKey: Buffer) {
  const list = watchList(id);
  const max = ctx.rt.config.Directory.MaxResults;
  const page = await searchUsers(ctx, actor, {}, masterKey, { pageSize: max, only: list.filter(Date.now()) });
  const items = page.items.filter(list.keep);
  return { id, title: list.title, items, truncated: page.truncated, incomplete: page.incomplete };
}

// ---- CSV

/**
 * One CSV cell (RFC 4180: always quoted, quotes doubled). A value a spreadsheet would read as a
 * formula (first character `=`, `+`, `-`, `@`, tab or carriage return) gets a leading `'`, so it
 * is shown as text and never run (docs/decisions.md, CSV exports).
 */
export function csvCell(v: unknown): string {
  let s = v === null || v === undefined ? '' : String(v);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return `"${s.replace(/"/g, '""')}"`;
}

export const csvOf = (header: string[], rows: unknown[][]) => [header, ...rows].map((r) => r.map(csvCell).join(',')).join('\r\n') + '\r\n';

// what an export carries of a user: the list's columns; contact numbers stay on the screen (decision 39)
const USER_COLUMNS = ['id', 'username', 'upn', 'displayName', 'givenName', 'sn', 'mail', 'description', 'enabled', 'lockedOut', 'lastSignIn', 'passwordLastSet', 'protected'] as const;
const userRows = (items: UserView[]) => items.map((u) => USER_COLUMNS.map((c) => u[c]));

export interface ExportAnswer {
  csv: string;
  filename: string;
  rows: number;
}

const auditActor = (actor: Actor) => ({ id: actor.identity.guid, name: actor.identity.username, provider: actor.identity.provider, ip: actor.ip });
const stamp = () => new Date().toISOString().slice(0, 10);

/**
 * GET /api/exports/users: the users of the operator's scope (or of the search `q`, the `ou`
 * filter), up to Directory:SearchMaxResults, as CSV; audited `users.export` with the row count.
 */
export async function exportUsers(ctx: DecisionContext, actor: Actor, query: { q?: string; ou?: string }, masterKey: Buffer, correlationId: string): Promise<ExportAnswer> {
  const page = await searchUsers(ctx, actor, { q: query.q, ou: query.ou }, masterKey, { pageSize: ctx.rt.config.Directory.SearchMaxResults });
  const csv = csvOf([...USER_COLUMNS], userRows(page.items));
  await ctx.rt.audit.append({
    event: 'users.export',
    outcome: 'success',
    actor: auditActor(actor),
    correlationId,
    details: { rows: page.items.length, ...(query.q ? { q: query.q } : {}), ...(query.ou ? { ou: query.ou } : {}), truncated: page.truncated, incomplete: page.incomplete },
  });
  return { csv, filename: `users-${stamp()}.csv`, rows: page.items.length };
}

/** GET /api/exports/watch-lists/{list}: one watch list as CSV; audited `users.watch.export` with the list and the row count. */
export async function exportWatchList(ctx: DecisionContext, actor: Actor, id: string, masterKey: Buffer, correlationId: string): Promise<ExportAnswer> {
  const list = await readWatchList(ctx, actor, id, masterKey);
  const csv = csvOf([...USER_COLUMNS], userRows(list.items));
  await ctx.rt.audit.append({
    event: 'users.watch.export',
    outcome: 'success',
    actor: auditActor(actor),
    target: { id, name: list.title, kind: 'watch_list' },
    correlationId,
    details: { list: id, rows: list.items.length, truncated: list.truncated },
  });
  return { csv, filename: `watch-${id}-${stamp()}.csv`, rows: list.items.length };
}
