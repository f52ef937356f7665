import type { AuditActor } from '../audit';
import type { ConsoleRuntime } from '../runtime';
import type { Store } from '../store';
import { getRecord, putRecord } from '../store/records';

// The "access-platform only" mode (the spec's 'Teleport only'): directory password sign-in is
// refused and operators sign in through the access platform only. Its own item, read fresh at
// every password sign-in, so the recovery command (`allow-password-login --confirm`) holds for
// the next sign-in of every instance (well within the spec's 5 seconds).

export interface SignInPolicy {
  accessOnly: boolean;
  changedAt?: string;
  changedBy?: string;
}

const KEY = { pk: 'INSTANCE', sk: 'SIGNIN_POLICY' };

export async function readSignInPolicy(store: Store): Promise<SignInPolicy> {
  return (await getRecord<SignInPolicy>(store, KEY.pk, KEY.sk))?.data ?? { accessOnly: false };
}

/**
 * Switch the mode; audited `settings.teleport_only` (decision 8: the spec's name) with `on`,
 * `off` or `off:recovery`. Returns whether anything changed (no change: no row).
 */
export async function setAccessOnly(
  rt: Pick<ConsoleRuntime, 'store' | 'audit'>,
  accessOnly: boolean,
  ctx: { actor: AuditActor; correlationId?: string; recovery?: boolean },
): Promise<{ changed: boolean; policy: SignInPolicy }> {
  for (;;) {
    const rec = await getRecord<SignInPolicy>(rt.store, KEY.pk, KEY.sk);
    const current = rec?.data ?? { accessOnly: false };
    if (current.accessOnly === accessOnly) return { changed: false, policy: current };
    const next: SignInPolicy = { accessOnly, changedAt: new Date().toISOString(), changedBy: ctx.actor.name ?? 'unknown' };
    if (!(await putRecord(rt.store, KEY.pk, KEY.sk, next, { expectVersion: rec?.version ?? 0 }))) continue;
    await rt.audit.append({
      event: 'settings.teleport_only',
      outcome: 'success',
      reason: accessOnly ? 'on' : ctx.recovery ? 'off:recovery' : 'off',
      actor: ctx.actor,
      ...(ctx.correlationId ? { correlationId: ctx.correlationId } : {}),
      details: { old: current.accessOnly, new: accessOnly },
    });
    return { changed: true, policy: next };
  }
}
