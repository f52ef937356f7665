import { useRoute } from '../ui';
import type { Hint } from './users';

// What every action dialog says around an approval request: before the form, that the action goes
// to the approvers; after it, a way to the request it filed (or only Close).

/** Said before the form of an action the operator holds only with approval. */
export function ApprovalNotice({ hint }: { hint: Hint }) {
  return hint === 'approval' ? <p className="notice">You hold this action only with approval: your request goes to the approvers, who carry it out.</p> : null;
}

/** After an action: open the request it filed, when it filed one, or close. */
export function AfterActionButtons({ filed, onClose }: { filed?: string; onClose: () => void }) {
  const { go } = useRoute();
  return (
    <div className="actions">
      {filed && (
        <button type="button" onClick={() => go(`/approvals/${filed}`)}>
          Open the request
        </button>
      )}
      <button type="button" className="secondary" onClick={onClose}>
        Close
      </button>
    </div>
  );
}
