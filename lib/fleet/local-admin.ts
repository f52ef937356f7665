import { badRequest, tooMany, unauthorized } from '../errors';
import { getRecord, putRecord } from '../store/records';
import type { Store } from '../store';
import { giveBack, takeFromWindows, type WindowSpec } from '../store/window';
import { constantTimeEqual } from '../crypto/seal';
import { signLocalToken } from './jwt';
import { dummyHash, hashPassword, passwordProblem, verifyPassword } from './password';
import type { FleetRuntime } from './runtime';

// The local administrator (break-glass) login: always an administrator, never scoped. The
// password is hashed with scrypt; failures are counted per source address and per account in
// sliding DynamoDB windows (lib/store/window.ts): an attempt takes its place before the password
// is checked, atomically, so N parallel attempts admit at most the limit on every instance, and
// gives it back when it succeeds. A password change bumps the `epoch`, which revokes every token
// issued before it.

export interface LocalAdmin {
  username: string;
  passwordHash: string;
  epoch: number;
  changedAt: string;
}

const PK = 'FLEET';
const SK = 'LOCAL_ADMIN';
export const LOGIN_WINDOW_SECONDS = 900;
export const MAX_FAILURES_PER_ADDRESS = 5;
export const MAX_FAILURES_PER_ACCOUNT = 50;

export async function readLocalAdmin(store: Store): Promise<LocalAdmin | undefined> {
  return (await getRecord<LocalAdmin>(store, PK, SK))?.data;
}

export async function setLocalAdminPassword(store: Store, username: string, password: string): Promise<void> {
  const problem = passwordProblem(password);
  if (problem) throw badRequest('weak_password', { message: problem });
  const rec = await getRecord<LocalAdmin>(store, PK, SK);
  const data: LocalAdmin = { username, passwordHash: await hashPassword(password), epoch: (rec?.data.epoch ?? 0) + 1, changedAt: new Date().toISOString() };
  if (!(await putRecord(store, PK, SK, data, { expectVersion: rec?.version ?? 0 }))) throw new Error('local administrator changed concurrently');
}

export async function localLogin(
  rt: FleetRuntime,
  input: { username: string; password: string },
  ctx: { sourceIp: string; correlationId: string },
): Promise<{ token: string; expiresAt: string; username: string }> {
  const actor = { id: input.username, name: input.username, provider: 'local', ip: ctx.sourceIp };
  const windows: WindowSpec[] = [
    { scope: 'fleet-login-ip', subject: ctx.sourceIp, limit: MAX_FAILURES_PER_ADDRESS, windowMs: LOGIN_WINDOW_SECONDS * 1000 },
    { scope: 'fleet-login-account', subject: 'local-admin', limit: MAX_FAILURES_PER_ACCOUNT, windowMs: LOGIN_WINDOW_SECONDS * 1000 },
  ];
  const taken = await takeFromWindows(rt.store, windows);
  if (!taken.admitted) {
    await rt.audit.append({ event: 'auth.login', outcome: 'denied', reason: 'too_many_attempts', actor, correlationId: ctx.correlationId });
    throw tooMany('too_many_attempts', { retryAfterSeconds: Math.ceil(taken.retryAfterMs / 1000) });
  }
  let nameOk = false;
  let passOk = false;
  let admin: LocalAdmin | undefined;
  try {
    admin = await readLocalAdmin(rt.store);
    nameOk = !!admin && constantTimeEqual(admin.username, input.username);
    passOk = await verifyPassword(input.password, nameOk ? admin!.passwordHash : await dummyHash());
  } catch (e) {
    await giveBack(rt.store, windows, taken.id);
    throw e;
  }
  if (!nameOk || !passOk) {
    // the place taken stays: a failure
    await rt.audit.append({ event: 'auth.login', outcome: 'failure', reason: 'invalid_credentials', actor, correlationId: ctx.correlationId });
    throw unauthorized('invalid_credentials');
  }
  await giveBack(rt.store, windows, taken.id);
  const { token, expiresAt } = await signLocalToken(await rt.masterKey(), admin!.username, admin!.epoch, rt.config.FLEET_LOCAL_TOKEN_TTL);
  await rt.audit.append({ event: 'auth.login', outcome: 'success', actor: { ...actor, id: admin!.username }, correlationId: ctx.correlationId });
  return { token, expiresAt, username: admin!.username };
}

