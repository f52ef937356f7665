import type { AuditActor } from '../audit';
import { conflict } from '../errors';
import type { ConsoleRuntime } from '../runtime';
import { readSettings, writeSettings, type StepUpMode } from './settings';

export async function updateStepUpMode(rt: ConsoleRuntime, mode: StepUpMode, actor: AuditActor, correlationId: string) {
  const current = await readSettings(rt.store);
  if (!current) throw conflict('not_configured');
  const old = current.settings.stepUpMode;
  if (!(await writeSettings(rt.store, { ...current.settings, stepUpMode: mode }, current.version))) throw conflict('settings_changed_concurrently');
  await rt.settings();
  await rt.audit.append({ event: 'settings.step_up_mode', outcome: 'success', actor, correlationId, details: { old, new: mode } });
  // diagnostics name the weaker modes (console spec, Authentication 3)
  const warning = mode === 'password' ? 'signin_password_only' : mode === 'none' ? 'step_up_disabled' : undefined;
  return { mode, previous: old, ...(warning ? { warning } : {}) };
}
