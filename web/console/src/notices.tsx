import type { Me } from './api';
import { Link } from './ui';

// What administrators must see first, above every screen (issue 31): the answer of
// GET /api/auth/me carries it for administrators only (lib/diagnostics/notices.ts).

const dcText = (count: number) =>
  count === 0
    ? 'No domain controller is configured: the console cannot read the directory.'
    : 'Only one domain controller is configured: if it stops, the console stops with it. Add a second DC to the directory settings.';

export function AdminNotices({ me }: { me: Me }) {
  if (!me.notices?.length) return null;
  return (
    <div className="notice" role="status" data-testid="admin-notices">
      {me.notices.map((n) => (
        <p key={n.code} data-testid={`notice-${n.code}`}>
          <strong>Warning:</strong> {dcText(n.count)} <Link to="/admin/diagnostics">See Diagnostics</Link>
        </p>
      ))}
    </div>
  );
}
