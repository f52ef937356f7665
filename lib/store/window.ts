import { createHash, randomBytes } from 'node:crypto';
import { cancellationReasons, isConditionFailed, type CancellationReason, type Store, type TransactItem } from './index';

// The one sliding-window primitive (DESIGN decision 12): "at most `limit` events in any
// `windowMs`-long span", counted atomically across instances. Sign-in limits, step-up failures,
// the fleet's local login and the password service's LAPS window all use it.
//
// Storage: one item per subject (pk WINDOW#<scope>#<sha256(subject)>) holding the timestamps of
// the events still inside the span, with a `version`. Every change is a read (consistent) followed
// by a write conditioned on the version read; a lost race re-reads and decides again. So N
// parallel attempts on one subject admit at most `limit`, whichever instance runs them, and the
// span slides with each event (no fixed clock windows). Taking several windows at once (e.g. the
// per-address and per-account limits of one sign-in) is one transaction: all admit or none counts.
// A take may skip the read (`assumeSpanEmpty`): its first write is conditioned on every entry of
// the item having left the span (`emptyFrom`, the moment the newest entry leaves it); a window
// with live entries refuses that write and the take reads and decides as above.

/** One event: when (epoch ms) and an id, so an admitted attempt can be given back. */
export type WindowEntry = [t: number, id: string];

export interface WindowSpec {
  /** what is limited (readable: `signin-address`, `laps`); the key of the item */
  scope: string;
  /** who or what is counted (an address, an objectGUID); hashed before it becomes a key */
  subject: string;
  limit: number;
  windowMs: number;
}

export type TakeResult =
  | { admitted: true; id: string }
  | { admitted: false; refusedBy: string; retryAfterMs: number; contention?: true };

// ---- pure logic (unit-tested without DynamoDB)

/** The entries still inside the span ending at `now` (an entry at t counts while now - t < windowMs). */
export const liveEntries = (entries: WindowEntry[], now: number, windowMs: number): WindowEntry[] =>
  entries.filter(([t]) => t > now - windowMs).sort((a, b) => a[0] - b[0]);

/**
 * Would one more event at `now` keep the span within the limit? When not: how long until it
 * would (the moment enough of the oldest entries have left the span).
 */
export function admit(entries: WindowEntry[], spec: Pick<WindowSpec, 'limit' | 'windowMs'>, now: number): { admitted: boolean; live: WindowEntry[]; retryAfterMs: number } {
  const live = liveEntries(entries, now, spec.windowMs);
  if (live.length < spec.limit) return { admitted: true, live, retryAfterMs: 0 };
  const freeing = live[live.length - spec.limit];
  return { admitted: false, live, retryAfterMs: Math.max(1, freeing[0] + spec.windowMs - now) };
}

// ---- the store

/** The item of a window (tests clear a window they fill). */
export const windowKey = (spec: Pick<WindowSpec, 'scope' | 'subject'>) => ({
  pk: `WINDOW#${spec.scope}#${createHash('sha256').update(spec.subject).digest('hex').slice(0, 40)}`,
  sk: 'WINDOW',
});

interface Snapshot {
  key: { pk: string; sk: string };
  entries: WindowEntry[];
  /** 0: no item; 'unread': assumed to hold no live entry (the write checks it) */
  version: number | 'unread';
}

async function read(store: Store, spec: Pick<WindowSpec, 'scope' | 'subject'>): Promise<Snapshot> {
  const key = windowKey(spec);
  const { Item } = await store.get({ Key: key, ConsistentRead: true });
  const entries = Array.isArray(Item?.data?.entries) ? (Item!.data.entries as WindowEntry[]) : [];
  return { key, entries, version: typeof Item?.version === 'number' ? Item.version : 0 };
}

/** The window's write: a put conditioned on the version read, or, unread, an update conditioned on no live entry. */
function writeItem(store: Store, snap: Snapshot, entries: WindowEntry[], windowMs: number, now: number): TransactItem {
  const newest = entries.reduce((m, [t]) => Math.max(m, t), 0);
  // expired items read as empty: DynamoDB deletes them only eventually (DynamoDB Local never)
  const ttl = Math.ceil((newest + windowMs) / 1000) + 1;
  const emptyFrom = newest + windowMs;
  if (snap.version === 'unread') {
    return {
      Update: {
        TableName: store.tableName,
        Key: snap.key,
        // the version still moves: a writer that read the item before this loses and reads again
        UpdateExpression: 'SET #data = :data, #emptyFrom = :emptyFrom, #ttl = :ttl, #et = :et ADD #version :one',
        ConditionExpression: 'attribute_not_exists(pk) OR #emptyFrom <= :now',
        ExpressionAttributeNames: { '#data': 'data', '#emptyFrom': 'emptyFrom', '#ttl': 'ttl', '#et': '_et', '#version': 'version' },
        ExpressionAttributeValues: { ':data': { entries }, ':emptyFrom': emptyFrom, ':ttl': ttl, ':et': 'Record', ':one': 1, ':now': now },
      },
    };
  }
  return {
    Put: {
      TableName: store.tableName,
      Item: { ...snap.key, _et: 'Record', data: { entries }, version: snap.version + 1, emptyFrom, ttl },
      ConditionExpression: snap.version === 0 ? 'attribute_not_exists(pk)' : 'version = :v',
      ...(snap.version === 0 ? {} : { ExpressionAttributeValues: { ':v': snap.version } }),
    },
  };
}

/**
 * Items written in the same transaction as the windows (the link's nonce, a condition on the
 * password service's pin, an audit append), built again for each attempt. A failed condition on
 * one of them refuses the take with its name, unless it is `retryable` (an audit head another
 * writer moved: `lost` learns the winner, the take is tried again).
 */
export interface AlongWith {
  name: string;
  items: TransactItem[];
  retryable?: boolean;
  lost?: (reasons: CancellationReason[]) => void;
  written?: () => void;
}

/** One window's new entries, written against the snapshot they were decided on. */
interface Change {
  snap: Snapshot;
  entries: WindowEntry[];
  windowMs: number;
  now: number;
}

/** true: written; false: a window (or a retryable item) moved under us: again; a name: that item's condition failed. */
async function write(store: Store, changes: Change[], along: AlongWith[] = []): Promise<boolean | { refusedBy: string }> {
  try {
    const windows = changes.map((c) => writeItem(store, c.snap, c.entries, c.windowMs, c.now));
    if (windows.length === 1 && !along.length && windows[0].Put) {
      await store.put(windows[0].Put);
    } else {
      await store.transactWrite([...along.flatMap((a) => a.items), ...windows]);
    }
    for (const a of along) a.written?.();
    return true;
  } catch (e) {
    if (!isConditionFailed(e)) throw e;
    const reasons = cancellationReasons(e);
    let at = 0;
    for (const a of along) {
      const mine = reasons.slice(at, at + a.items.length);
      at += a.items.length;
      if (!mine.some((r) => r?.Code === 'ConditionalCheckFailed')) continue;
      if (!a.retryable) return { refusedBy: a.name };
      a.lost?.(mine);
    }
    return false; // a window, or a retryable item, moved: read again and decide again
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Jittered back-off after a lost race: parallel writers spread out instead of colliding again. */
const backoff = (attempt: number) => sleep(Math.floor(Math.random() * (4 << Math.min(attempt, 5))) + 1);

export interface WindowOptions {
  /** the clock (epoch ms); injectable so a test can place events across any boundary */
  now?: () => number;
  /** lost races tolerated before giving up (a hard limit then refuses: fail closed) */
  maxTries?: number;
}

/**
 * Count one event in every window, only if every window admits it (conditional writes; one
 * transaction for several windows). Refused: which window, and when an event would be admitted.
 * `assumeSpanEmpty`: the first attempt writes without reading, as if no entry were live (the
 * usual case for a subject seldom counted: one write instead of a read and a write); a window with
 * live entries refuses that write, and the take reads and decides.
 */
export async function takeFromWindows(
  store: Store,
  specs: WindowSpec[],
  opts: WindowOptions & { along?: () => AlongWith[] | Promise<AlongWith[]>; assumeSpanEmpty?: boolean } = {},
): Promise<TakeResult> {
  const clock = opts.now ?? Date.now;
  const id = randomBytes(6).toString('hex');
  const maxTries = opts.maxTries ?? 30;
  for (let attempt = 0; attempt < maxTries; attempt++) {
    const now = clock();
    const unread = attempt === 0 && opts.assumeSpanEmpty === true;
    const snaps = unread ? specs.map((s): Snapshot => ({ key: windowKey(s), entries: [], version: 'unread' })) : await Promise.all(specs.map((s) => read(store, s)));
    const changes: Change[] = [];
    for (let i = 0; i < specs.length; i++) {
      const decision = admit(snaps[i].entries, specs[i], now);
      if (!decision.admitted) return { admitted: false, refusedBy: specs[i].scope, retryAfterMs: decision.retryAfterMs };
      changes.push({ snap: snaps[i], entries: [...decision.live, [now, id]], windowMs: specs[i].windowMs, now });
    }
    const written = await write(store, changes, opts.along ? await opts.along() : []);
    if (typeof written === 'object') return { admitted: false, refusedBy: written.refusedBy, retryAfterMs: 0 };
    if (written) return { admitted: true, id };
    // the unread write found live entries: read them at once (not a race lost)
    if (!unread) await backoff(attempt);
  }
  return { admitted: false, refusedBy: specs[0]?.scope ?? 'window', retryAfterMs: 1000, contention: true };
}

/** Give an admitted event back (e.g. a sign-in that succeeded is not a failure). Best effort. */
export async function giveBack(store: Store, specs: WindowSpec[], id: string, opts: WindowOptions = {}): Promise<void> {
  const clock = opts.now ?? Date.now;
  await Promise.all(
    specs.map(async (spec) => {
      for (let attempt = 0; attempt < (opts.maxTries ?? 30); attempt++) {
        const snap = await read(store, spec);
        if (!snap.entries.some(([, e]) => e === id)) return;
        const entries = liveEntries(snap.entries, clock(), spec.windowMs).filter(([, e]) => e !== id);
        if (await write(store, [{ snap, entries, windowMs: spec.windowMs, now: clock() }])) return;
        await backoff(attempt);
      }
    }),
  );
}

/**
 * Record an event whatever the count (a soft limit that slows rather than refuses): the item keeps
 * only the newest `limit` entries of the span, which is all a "reached the limit?" question needs.
 * Best effort under contention: the winners' events are recorded.
 */
export async function noteInWindow(store: Store, spec: WindowSpec, opts: WindowOptions = {}): Promise<void> {
  const clock = opts.now ?? Date.now;
  const id = randomBytes(6).toString('hex');
  for (let attempt = 0; attempt < (opts.maxTries ?? 10); attempt++) {
    const now = clock();
    const snap = await read(store, spec);
    const entries: WindowEntry[] = [...liveEntries(snap.entries, now, spec.windowMs), [now, id]];
    if (await write(store, [{ snap, entries: entries.slice(-spec.limit), windowMs: spec.windowMs, now }])) return;
    await backoff(attempt);
  }
}

/** Would one more event be admitted now? (A read only: nothing is counted.) */
export async function peekWindow(store: Store, spec: WindowSpec, opts: WindowOptions = {}): Promise<{ admitted: boolean; count: number; retryAfterMs: number }> {
  const snap = await read(store, spec);
  const d = admit(snap.entries, spec, (opts.now ?? Date.now)());
  return { admitted: d.admitted, count: d.live.length, retryAfterMs: d.retryAfterMs };
}

/** Events in the span ending now. */
export async function countInWindow(store: Store, spec: WindowSpec, opts: WindowOptions = {}): Promise<number> {
  return (await peekWindow(store, spec, opts)).count;
}
