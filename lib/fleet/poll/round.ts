import { randomBytes } from 'node:crypto';
import { logger } from '../../log';
import type { OutboundTrust } from '../../outbound/https';
import type { Store } from '../../store';
import { getRecord, putRecord } from '../../store/records';
import { listConsoles, type ConsoleRecord } from '../consoles';
import type { Transition } from '../alerts/notify';
import type { RuleInput } from '../alerts/rules';
import { evaluateAlerts } from '../alerts/evaluate';
import { readAlertSettings } from '../alerts/store';
import { deletePollState, nextPollState, readPollStates, writePollState, type ConsolePollState } from './state';
import { pollConsole } from './status';
import { advanceUpgradePlans } from '../upgrades/round';

// A polling round, bounded and resumable (docs/decisions.md, "Polling rounds"). The round
// record (pk POLL, sk ROUND) names the round and holds a lease, so one invocation works on it at
// a time; each console's state records the round of its last poll, so the consoles still to poll
// are those whose state names another round. An invocation polls with bounded concurrency and
// starts no poll that could not end before its deadline; what is left is continued by the next
// invocation (a continuation it triggers, or the next scheduled one). Once every console was
// polled the rules are evaluated once, the transitions notified, and the round closed.

export interface RoundRecord {
  id: string;
  startedAt: string;
  completedAt?: string;
  lease?: { owner: string; until: number };
  polled: number;
  invocations: number;
  consoles?: number;
  durationMs?: number;
}

export interface RoundFacts {
  proxies?: RuleInput['proxies'];
  identity?: RuleInput['identity'];
  accessCert?: RuleInput['accessCert'];
  upgrades?: RuleInput['upgrades'];
}

export interface RoundDeps {
  store: Store;
  masterKey: () => Promise<Buffer>;
  concurrency: number;
  trust?: OutboundTrust;
  /** per poll (default 10 s) */
  timeoutMs?: number;
  /** the facts beside the consoles (cluster, identity, access proxy certificate), read once per round */
  facts?: () => Promise<RoundFacts>;
  notify?: (transitions: Transition[]) => Promise<void>;
  /** a new round starts when the last one started at least this long ago (default 55 s: a 1-minute schedule with jitter) */
  intervalMs?: number;
}

export interface InvocationReport {
  outcome: 'busy' | 'not_due' | 'partial' | 'completed';
  roundId?: string;
  polledNow: number;
  remaining: number;
  transitions?: number;
  durationMs?: number;
}

const PK = 'POLL';
const SK = 'ROUND';
const POLL_MARGIN_MS = 1_000;

export async function readRound(store: Store): Promise<RoundRecord | undefined> {
  return (await getRecord<RoundRecord>(store, PK, SK))?.data;
}

/** Run `work` over `items` with at most `limit` at a time, starting none once `stop()` says so. */
export async function boundedEach<T>(items: T[], limit: number, stop: () => boolean, work: (item: T) => Promise<void>): Promise<number> {
  let next = 0;
  let started = 0;
  const lane = async () => {
    while (next < items.length && !stop()) {
      const item = items[next++];
      started++;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return started;
}

/** Take the round (a new one when due) under a lease; undefined when another invocation holds it or none is due. */
async function takeRound(store: Store, owner: string, leaseUntil: number, intervalMs: number): Promise<{ round: RoundRecord; version: number } | 'busy' | 'not_due'> {
  const now = Date.now();
  const cur = await getRecord<RoundRecord>(store, PK, SK);
  let round: RoundRecord;
  if (!cur || (cur.data.completedAt && now - Date.parse(cur.data.startedAt) >= intervalMs)) {
    round = { id: `${new Date(now).toISOString()}#${randomBytes(3).toString('hex')}`, startedAt: new Date(now).toISOString(), polled: 0, invocations: 0 };
  } else if (cur.data.completedAt) return 'not_due';
  else if (cur.data.lease && cur.data.lease.owner !== owner && cur.data.lease.until > now) return 'busy';
  else round = cur.data;
  round = { ...round, lease: { owner, until: leaseUntil }, invocations: round.invocations + 1 };
  const version = cur?.version ?? 0;
  if (!(await putRecord(store, PK, SK, round, { expectVersion: version }))) return 'busy';
  return { round, version: version + 1 };
}

/**
 * One invocation's share of the current round, until `deadline` (epoch ms). The deadline must
 * leave room for one poll's timeout plus the evaluation (the scheduled function keeps 15 s).
 */
export async function runPollInvocation(deps: RoundDeps, opts: { deadline: number; owner?: string }): Promise<InvocationReport> {
  const t0 = Date.now();
  const owner = opts.owner ?? randomBytes(6).toString('hex');
  const timeoutMs = deps.timeoutMs ?? 10_000;
  const taken = await takeRound(deps.store, owner, opts.deadline + 5_000, deps.intervalMs ?? 55_000);
  if (typeof taken === 'string') return { outcome: taken, polledNow: 0, remaining: 0 };
  let { round, version } = taken;
  const save = async (patch: Partial<RoundRecord>) => {
    const next = { ...round, ...patch };
    if (!(await putRecord(deps.store, PK, SK, next, { expectVersion: version }))) throw new Error('poll round taken over by another invocation');
    round = next;
    version++;
  };

  const [consoles, states, key] = await Promise.all([listConsoles(deps.store), readPollStates(deps.store), deps.masterKey()]);
  const todo = consoles.filter((c) => states.get(c.id)?.roundId !== round.id);
  let polledNow = 0;
  await boundedEach(todo, deps.concurrency, () => Date.now() + timeoutMs + POLL_MARGIN_MS > opts.deadline, async (c: ConsoleRecord) => {
    const prev = states.get(c.id);
    const r = await pollConsole(c, { masterKey: key, trust: deps.trust, timeoutMs, witnessSeq: prev?.witness?.seq });
    const next: ConsolePollState = nextPollState(prev, c.id, round.id, r);
    await writePollState(deps.store, next);
    states.set(c.id, next);
    polledNow++;
  });
  const remaining = consoles.filter((c) => states.get(c.id)?.roundId !== round.id).length;
  if (remaining > 0) {
    await save({ polled: round.polled + polledNow, lease: undefined });
    logger.info('poll round continues in another invocation', { round: round.id, polledNow, remaining });
    return { outcome: 'partial', roundId: round.id, polledNow, remaining, durationMs: Date.now() - t0 };
  }

  // every console was polled this round: evaluate once, notify, close
  const facts = deps.facts ? await deps.facts() : {};
  const settings = await readAlertSettings(deps.store);
  const now = Date.now();
  // upgrade plans: closed when the console reports the target, then the overdue rule over the open ones
  const upgrades = await advanceUpgradePlans(deps.store, { now, roundId: round.id, consoles, states });
  const transitions = await evaluateAlerts(deps.store, { now, roundId: round.id, settings, consoles, states, upgrades, ...facts });
  if (deps.notify) await deps.notify(transitions);
  const registered = new Set(consoles.map((c) => c.id));
  for (const id of states.keys()) if (!registered.has(id)) await deletePollState(deps.store, id); // a removed console's witness goes with it
  const completedAt = new Date().toISOString();
  await save({ polled: round.polled + polledNow, consoles: consoles.length, completedAt, durationMs: Date.parse(completedAt) - Date.parse(round.startedAt), lease: undefined });
  return { outcome: 'completed', roundId: round.id, polledNow, remaining: 0, transitions: transitions.length, durationMs: Date.now() - t0 };
}
