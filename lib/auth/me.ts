import type { OperatorRights } from '../authz/rights';
import { adminNotices } from '../diagnostics/notices';
import type { ConsoleRuntime } from '../runtime';
import { readBranding } from '../setup/branding';
import type { OperatorIdentity, Session } from './sessions';

/**
 * GET /api/auth/me: the signed-in operator as the web app shows them: name, permissions, the
 * step-up's mode, time and window, the instance's name and colour, and administrators' notices.
 */
export async function signedInOperator(rt: ConsoleRuntime, operator: OperatorIdentity, rights: OperatorRights, session: Session | undefined) {
  const [settings, { branding }] = await Promise.all([rt.settings(), readBranding(rt.store)]);
  return {
    username: operator.username,
    displayName: operator.displayName,
    provider: operator.provider,
    superAdministrator: rights.superAdministrator,
    permissions: [...rights.permissions].sort(),
    stepUpMode: settings?.stepUpMode,
    stepUpAt: session?.stepUpAt ? new Date(session.stepUpAt * 1000).toISOString() : null,
    // how long a step-up lasts (Authentication:StepUpWindow): the web app shows the time left
    stepUpWindowSeconds: rt.config.Authentication.StepUpWindow,
    // the instance's name in the top bar and tab title: the branding title, else the domain
    instance: branding.title ?? settings?.domain,
    accentColour: branding.accentColour,
    // administrators: e.g. fewer than two DCs, shown above every screen (not only in diagnostics)
    notices: adminNotices(rights, settings),
  };
}
