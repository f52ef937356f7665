import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { plainText } from '../../plain-text';
import type { Store } from '../../store';
import { deleteRecord, getRecord, putRecord, queryRecords } from '../../store/records';
import { clientCodeSchema } from '../clients';
import { ALERT_KINDS, type AlertKind } from './rules';
import type { Acknowledgement, Alert } from './store';

export type { Acknowledgement } from './store';

// Silences and acknowledges (issue 29; the spec is silent, docs/decisions.md "Alerts you can act
// on"). A silence matches alerts by rule (kind), client and/or console until its end: the alerts
// stay active and on screen, marked silenced, and their transitions are recorded in the history
// without a notification. A silence is a record with a TTL at its end (an ended silence reads as
// absent). An acknowledge lives on the active alert itself and goes with it when it resolves.

export const SILENCE_MAX_DAYS = 30;
const SK = (id: string) => `SILENCE#${id}`;
const PK = 'ALERT';

export interface Silence {
  id: string;
  kind?: AlertKind;
  clientCode?: string;
  consoleId?: string;
  endsAt: string;
  comment: string;
  createdAt: string;
  createdBy: string;
}

// one line: a comment is shown in lists and carried into notifications (issue 25: no control characters, line breaks included)
export const commentSchema = plainText().trim().min(1).max(500);

/** POST /api/alerts/silences: at least one matcher, an end between now and 30 days ahead, a comment. */
export const silenceInputSchema = z
  .object({
    kind: z.enum(ALERT_KINDS).optional(),
    clientCode: clientCodeSchema.optional(),
    consoleId: z.uuid().optional(),
    endsAt: z.iso.datetime({ offset: true }),
    comment: commentSchema,
  })
  .strict()
  .superRefine((s, ctx) => {
    if (!s.kind && !s.clientCode && !s.consoleId) ctx.addIssue({ code: 'custom', path: ['kind'], message: 'name a rule, a client or a console' });
    const end = Date.parse(s.endsAt);
    if (!(end > Date.now())) ctx.addIssue({ code: 'custom', path: ['endsAt'], message: 'must be in the future' });
    else if (end > Date.now() + SILENCE_MAX_DAYS * 86_400_000) ctx.addIssue({ code: 'custom', path: ['endsAt'], message: `at most ${SILENCE_MAX_DAYS} days ahead` });
  });
export type SilenceInput = z.output<typeof silenceInputSchema>;

export const acknowledgeInputSchema = z.object({ comment: commentSchema }).strict();

/** Does the silence cover this alert? Every matcher it names must hold. */
export function silenceMatches(s: Pick<Silence, 'kind' | 'clientCode' | 'consoleId'>, a: Pick<Alert, 'kind' | 'clientCode' | 'consoleId'>): boolean {
  if (!s.kind && !s.clientCode && !s.consoleId) return false;
  return (!s.kind || s.kind === a.kind) && (!s.clientCode || s.clientCode === a.clientCode) && (!s.consoleId || s.consoleId === a.consoleId);
}

/** The first silence in force at `now` that covers the alert. */
export const silencing = (silences: Silence[], a: Pick<Alert, 'kind' | 'clientCode' | 'consoleId'>, now = Date.now()) =>
  silences.find((s) => Date.parse(s.endsAt) > now && silenceMatches(s, a));

/** Silences in force (ended ones read as absent), soonest end first. */
export async function listSilences(store: Store, now = Date.now()): Promise<Silence[]> {
  return (await queryRecords<Silence>(store, PK, 'SILENCE#'))
    .map((r) => r.data)
    .filter((s) => Date.parse(s.endsAt) > now)
    .sort((a, b) => a.endsAt.localeCompare(b.endsAt));
}

export async function getSilence(store: Store, id: string, now = Date.now()): Promise<Silence | undefined> {
  const s = (await getRecord<Silence>(store, PK, SK(id)))?.data;
  return s && Date.parse(s.endsAt) > now ? s : undefined;
}

/** Store a silence; `clientCode` is the console's client when a console is named. */
export async function createSilence(store: Store, input: SilenceInput & { clientCode?: string }, by: string, now = new Date()): Promise<Silence> {
  const s: Silence = {
    id: randomUUID(),
    ...(input.kind ? { kind: input.kind } : {}),
    ...(input.clientCode ? { clientCode: input.clientCode } : {}),
    ...(input.consoleId ? { consoleId: input.consoleId } : {}),
    endsAt: new Date(Date.parse(input.endsAt)).toISOString(),
    comment: input.comment,
    createdAt: now.toISOString(),
    createdBy: by,
  };
  await putRecord(store, PK, SK(s.id), s, { expectVersion: 0, ttl: Math.ceil(Date.parse(s.endsAt) / 1000) });
  return s;
}

export const deleteSilence = (store: Store, id: string) => deleteRecord(store, PK, SK(id));

/**
 * Acknowledge an active alert: it stays active, marked with who, when and why (a new acknowledge
 * replaces the previous one). Undefined when the alert is not active (resolved meanwhile).
 */
export async function acknowledgeAlert(store: Store, key: string, ack: Acknowledgement): Promise<Alert | undefined> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const cur = await getRecord<Alert>(store, PK, `ACTIVE#${key}`);
    if (!cur) return undefined;
    const next: Alert = { ...cur.data, acknowledged: ack };
    if (await putRecord(store, PK, `ACTIVE#${key}`, next, { expectVersion: cur.version })) return next;
  }
  throw new Error('acknowledge: the alert kept changing');
}
