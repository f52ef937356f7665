// Requests in words (issue 29): what an action is called, how a request is titled, what its
// state means. The codes stay in the API and the audit; people read these.

/** An approvable action by itself: the approval rules and the inbox's Action column. */
export const ACTION_WORDS: Record<string, string> = {
  'users.password.reset': 'Reset password',
  'users.unlock': 'Unlock account',
  'users.disable': 'Disable account',
  'users.enable': 'Enable account',
  'users.attributes.write': 'Edit user attributes',
  'groups.members.write': 'Change group members',
  'groups.members.add.temporary': 'Temporary group membership',
  'roles.save': 'Save a role',
  'delegations.save': 'Save a delegation',
};

export const actionWords = (action: string) => ACTION_WORDS[action] ?? action;

/** A duration in minutes, in words: "15 min", "1 h", "2 h 30 min". */
export function durationWords(minutes: number): string {
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return [h && `${h} h`, m && `${m} min`].filter(Boolean).join(' ') || '0 min';
}

/** The time left until `until`, in words ("1 h 5 min left", "less than a minute left", "time is up"). */
export function timeLeft(until: string, now = Date.now()): string {
  const ms = Date.parse(until) - now;
  if (ms <= 0) return 'time is up';
  if (ms < 60_000) return 'less than a minute left';
  return `${durationWords(Math.floor(ms / 60_000))} left`;
}

export interface RequestLike {
  kind?: string;
  action: string;
  target: { name: string };
  parameters?: Record<string, unknown>;
}

/** A request's title: "Unlock ben.fox", "Reset the password of E2E User One". */
export function requestTitle(r: RequestLike): string {
  const n = r.target.name;
  const p = r.parameters ?? {};
  switch (r.action) {
    case 'users.password.reset':
      return `Reset the password of ${n}`;
    case 'users.unlock':
      return `Unlock ${n}`;
    case 'users.disable':
      return r.kind === 'leaver' ? `Leaver: disable ${n} and take their groups away` : `Disable ${n}`;
    case 'users.enable':
      return `Enable ${n}`;
    case 'users.attributes.write':
      return `Edit the attributes of ${n}`;
    case 'groups.members.write': {
      const add = Array.isArray(p.add) ? p.add.length : 0;
      const remove = Array.isArray(p.remove) ? p.remove.length : 0;
      const what = [add && `add ${add}`, remove && `remove ${remove}`].filter(Boolean).join(', ');
      return `Change the members of ${n}${what ? ` (${what})` : ''}`;
    }
    case 'groups.members.add.temporary': {
      const who = typeof p.memberName === 'string' && p.memberName ? p.memberName : 'a member';
      return `Add ${who} to ${n} for ${durationWords(Number(p.durationMinutes) || 0)}`;
    }
    case 'roles.save':
      return `Save the role ${n}`;
    case 'delegations.save':
      return `Save the delegation ${n}`;
    default:
      return `${r.action} on ${n}`;
  }
}

export const STATE_WORDS: Record<string, { text: string; badge: string }> = {
  pending: { text: 'Waiting for approval', badge: 'badge warn' },
  executed: { text: 'Executed', badge: 'badge good' },
  rejected: { text: 'Rejected', badge: 'badge bad' },
  cancelled: { text: 'Cancelled', badge: 'badge' },
  expired: { text: 'Expired', badge: 'badge' },
};
export const stateWords = (s: string) => STATE_WORDS[s]?.text ?? s;
