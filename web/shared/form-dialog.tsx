import type { ReactNode } from 'react';
import { Modal } from './dialog';
import { Busy, ErrorText } from './states';

// A form in the app's own dialog, the shape every editor of both apps has: the fields, what went
// wrong, the button that saves (showing its progress) and Cancel. Esc and × close it; focus
// starts on the first field and returns to the control that opened it.

export function FormDialog({
  title,
  onClose,
  onSubmit,
  busy,
  error,
  errorSlot,
  submit,
  submitDisabled,
  danger,
  extra,
  wide,
  children,
}: {
  title: string;
  onClose: () => void;
  onSubmit: () => unknown;
  busy?: boolean;
  error?: unknown;
  /** in place of the plain error line (a refusal that offers something to do) */
  errorSlot?: ReactNode;
  /** the save button's words ("Save role") */
  submit: ReactNode;
  submitDisabled?: boolean;
  /** the submit button marked as a dangerous act (a lock) */
  danger?: boolean;
  /** more buttons beside Save (Delete) */
  extra?: ReactNode;
  wide?: boolean;
  children: ReactNode;
}) {
  return (
    <Modal title={title} onClose={onClose} wide={wide}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void onSubmit();
        }}
      >
        {children}
        {errorSlot ?? <ErrorText error={error} />}
        <div className="actions">
          <Busy type="submit" className={danger ? 'danger' : undefined} busy={busy} disabled={submitDisabled}>
            {submit}
          </Busy>
          {extra}
          <button type="button" className="secondary" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  );
}
