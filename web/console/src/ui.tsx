// The console's UI: the shared kit of both apps (web/shared/ui.tsx) and the console's own pieces:
// the step-up prompt, the password shown once, OU paths in words.
export * from '../../shared/ui';
export { Cancelled, StepUpProvider, useStepUp } from './stepup';
export { GroupedDigits, SECRET_SECONDS, SecretText, SecretView, digitGroups, spoken } from './secret';

/** `OU=Workstations,OU=Managed,DC=corp,DC=example` → `Managed / Workstations` */
export const ouPath = (dn?: string) =>
  (dn ?? '')
    .split(/,(?=(?:OU|CN|DC)=)/i)
    .filter((p) => !/^DC=/i.test(p))
    .map((p) => p.replace(/^(OU|CN)=/i, ''))
    .reverse()
    .join(' / ') || '—';
