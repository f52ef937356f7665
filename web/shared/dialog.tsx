import { createContext, useCallback, useContext, useEffect, useId, useRef, useState, type ReactNode } from 'react';

// The app's own dialogs (native <dialog>: focus trapped, Esc closes): focus goes to the first
// field when it opens and back to the control that opened it when it closes; a confirmation
// is one of them, never the browser's confirm().

/** Where focus starts, in this order: a control marked for it, the first field, the first button or link. */
const START = ['[data-autofocus]', 'input:not([type=hidden]):not([disabled]), select:not([disabled]), textarea:not([disabled])', 'button:not([disabled]), a[href]'];

export function Modal({ title, onClose, children, wide }: { title: string; onClose: () => void; children: ReactNode; wide?: boolean }) {
  const ref = useRef<HTMLDialogElement>(null);
  const id = useId();
  useEffect(() => {
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    const d = ref.current!;
    if (!d.open) d.showModal();
    // showModal focuses the first control (the close button): the first field is where typing starts
    const body = d.querySelector('.dialog-body')!;
    for (const sel of START) {
      const el = body.querySelector<HTMLElement>(sel);
      if (el) {
        el.focus();
        break;
      }
    }
    return () => {
      if (d.open) d.close();
      // back to the control that opened it; if a reload replaced it, to the page's main region
      if (opener?.isConnected) opener.focus();
      else document.getElementById('main')?.focus();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      className={wide ? 'wide' : undefined}
      aria-labelledby={id}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
    >
      <div className="dialog-head">
        <h2 id={id}>{title}</h2>
        <button type="button" className="ghost close" aria-label="Close dialog" onClick={onClose}>
          ×
        </button>
      </div>
      <div className="dialog-body">{children}</div>
    </dialog>
  );
}

export interface ConfirmOptions {
  title: string;
  body: ReactNode;
  /** the button that goes ahead, e.g. "Delete the delegation" */
  confirm: string;
  /** a destructive action: the button is drawn as a danger */
  danger?: boolean;
}
type Ask = (o: ConfirmOptions) => Promise<boolean>;
const ConfirmCtx = createContext<Ask>(async () => false);

/** `const confirm = useConfirm(); if (await confirm({ ... })) ...`: the app's own dialog. */
export const useConfirm = () => useContext(ConfirmCtx);

export function ConfirmProvider({ children }: { children: ReactNode }) {
  const [asked, setAsked] = useState<ConfirmOptions & { resolve: (ok: boolean) => void }>();
  const ask = useCallback<Ask>((o) => new Promise<boolean>((resolve) => setAsked({ ...o, resolve })), []);
  const answer = (ok: boolean) => {
    asked?.resolve(ok);
    setAsked(undefined);
  };
  return (
    <ConfirmCtx.Provider value={ask}>
      {children}
      {asked && (
        <Modal title={asked.title} onClose={() => answer(false)}>
          <div className="confirm-body">{asked.body}</div>
          <div className="actions">
            <button type="button" className={asked.danger ? 'danger' : undefined} onClick={() => answer(true)} data-autofocus={asked.danger ? undefined : true}>
              {asked.confirm}
            </button>
            {/* a destructive confirmation starts on Cancel: Enter does not destroy by accident */}
            <button type="button" className="secondary" onClick={() => answer(false)} data-autofocus={asked.danger ? true : undefined}>
              Cancel
            </button>
          </div>
        </Modal>
      )}
    </ConfirmCtx.Provider>
  );
}
