// How both apps write times: a date and a 24-hour time in the reader's locale, and how long ago.

const DATE_TIME: Intl.DateTimeFormatOptions = { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' };

export const when = (iso?: string | null) => (iso ? new Date(iso).toLocaleString(undefined, DATE_TIME) : '—');

/** "3 min ago", "in 2 h", "5 days ago" (rounded; what a list shows beside the exact time). */
export function ago(iso?: string | null, now = Date.now()): string {
  if (!iso) return '—';
  const s = Math.round((Date.parse(iso) - now) / 1000);
  const a = Math.abs(s);
  const days = a / 86400;
  const text = a < 45 ? 'moments' : a < 90 * 60 ? `${Math.round(a / 60)} min` : a < 36 * 3600 ? `${Math.round(a / 3600)} h` : days < 60 ? `${Math.round(days)} days` : days < 730 ? `${Math.round(days / 30.4)} months` : `${Math.round(days / 365.25)} years`;
  return text === 'moments' ? (s <= 0 ? 'just now' : 'in a moment') : s <= 0 ? `${text} ago` : `in ${text}`;
}
