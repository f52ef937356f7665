import { tooMany } from '../../errors';
import { outboundTrust, type OutboundTrust } from '../../outbound/https';
import { takeFromWindows, type WindowSpec } from '../../store/window';
import type { ConsoleRecord } from '../consoles';
import type { Acting } from '../register';
import type { FleetRuntime } from '../runtime';
import { readPollState, writePollState, nextPollState } from './state';
import { pollConsole } from './status';
import { consolePollView } from './view';

// "Poll now" for one console (an operator of its client, or an administrator): the same poll as
// a round's, its result written as the console's last poll, audited `console.poll`. It decides
// no alert: rules are evaluated once per round, on the round's data (spec: Alert lifecycle);
// a failed poll now still counts as one failure in a row, as any poll does.
//
// The state keeps the round it belongs to (`roundId` of the previous poll), so a round under way
// still polls the console itself, and the rules still decide only on data read in their round.
//
// Rate (docs/decisions.md, "Poll now"): at most POLL_NOW_PER_MINUTE in any 60-second span per
// console, whoever asks: each poll is a request to the client's console, and a held button or a
// script must not turn the fleet plane into a load on it.

export const POLL_NOW_PER_MINUTE = 6;

export const pollNowWindow = (consoleId: string): WindowSpec => ({ scope: 'console-poll-now', subject: consoleId, limit: POLL_NOW_PER_MINUTE, windowMs: 60_000 });

const target = (c: ConsoleRecord) => ({ id: c.id, name: new URL(c.url).origin, kind: 'console' });

export async function pollConsoleNow(rt: FleetRuntime, c: ConsoleRecord, by: Acting, opts: { trust?: OutboundTrust; timeoutMs?: number } = {}) {
  const taken = await takeFromWindows(rt.store, [pollNowWindow(c.id)]);
  if (!taken.admitted) {
    const retryAfterSeconds = Math.ceil(taken.retryAfterMs / 1000);
    await rt.audit.append({ event: 'console.poll', outcome: 'denied', reason: 'too_many_requests', actor: by.actor, client: c.clientCode, target: target(c), correlationId: by.correlationId, details: { retryAfterSeconds } });
    throw tooMany('too_many_requests', { reason: 'poll_now', retryAfterSeconds });
  }
  const [prev, key] = await Promise.all([readPollState(rt.store, c.id), rt.masterKey()]);
  const trust = opts.trust ?? outboundTrust(rt.config.FLEET_OUTBOUND_ALLOWED_TARGETS);
  const r = await pollConsole(c, { masterKey: key, trust, timeoutMs: opts.timeoutMs, witnessSeq: prev?.witness?.seq });
  await writePollState(rt.store, nextPollState(prev, c.id, prev?.roundId ?? 'poll-now', r));
  await rt.audit.append({
    event: 'console.poll',
    outcome: r.ok ? 'success' : 'error',
    ...(r.error ? { reason: r.error } : {}),
    actor: by.actor,
    client: c.clientCode,
    target: target(c),
    correlationId: by.correlationId,
    details: { ms: r.ms, ...(r.httpStatus ? { httpStatus: r.httpStatus } : {}), ...(r.status?.instance.version ? { version: r.status.instance.version } : {}) },
  });
  return consolePollView(rt.store, c.id);
}
