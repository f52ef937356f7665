import { useState, type ReactNode } from 'react';
import { useConfirm, type ConfirmOptions } from './dialog';
import { ErrorText } from './states';
import { DataTable, type Column } from './table';
import { useAction } from './ui';

// The administration list of both apps: a button that adds one, the rows as a table (cards on a
// phone), Edit and Remove on each row, the editor in the app's own dialog, a removal confirmed
// in it too (never the browser's confirm()). Focus goes back to the button that opened a dialog.

export interface EditorDone {
  /** closes the editor, nothing changed */
  close: () => void;
  /** closes the editor and reloads the list */
  saved: () => void;
}

export function AdminList<T>({
  caption,
  testId,
  rows,
  rowKey,
  rowTestId,
  empty,
  columns,
  name,
  addLabel,
  editor,
  editLabel,
  canEdit,
  remove,
  onChanged,
  addDisabled,
  buttons = 'secondary',
  more,
  below,
  removeLabel = 'Remove',
}: {
  caption: string;
  testId?: string;
  rows: T[];
  rowKey: (row: T) => string;
  rowTestId?: (row: T) => string | undefined;
  empty: ReactNode;
  columns: Array<Column<T> | false | undefined>;
  /** a row's name, in the accessible names of its buttons ("Edit ben.fox") */
  name: (row: T) => string;
  /** the button that adds one ("New role"); none when absent */
  addLabel?: string;
  addDisabled?: boolean;
  /** the editor of a row, or of a new one (row undefined) */
  editor?: (row: T | undefined, done: EditorDone) => ReactNode;
  /** what the Edit button shows (default: Edit, with the row's name for screen readers) */
  editLabel?: (row: T) => ReactNode;
  canEdit?: (row: T) => boolean;
  /** Remove on each row: the question asked first, then the removal */
  remove?: { ask: (row: T) => ConfirmOptions; run: (row: T) => Promise<unknown>; can?: (row: T) => boolean };
  /** the list changed (saved or removed): load it again */
  onChanged: () => void;
  /** how the row's buttons are drawn: as buttons, or as links (the console's administration) */
  buttons?: 'secondary' | 'link';
  /** more buttons of a row, before Edit (Send test, Disable) */
  more?: (row: T) => ReactNode;
  /** what a row shows under its buttons (the result of its last test) */
  below?: (row: T) => ReactNode;
  /** the removal's word ("Remove", "Delete") */
  removeLabel?: string;
}) {
  const [editing, setEditing] = useState<{ row?: T }>();
  const confirm = useConfirm();
  const removal = useAction();
  const done: EditorDone = {
    close: () => setEditing(undefined),
    saved: () => {
      setEditing(undefined);
      onChanged();
    },
  };
  const rowActions: Column<T> | false = (!!editor || !!remove || !!more) && {
    header: <span className="sr-only">Actions</span>,
    label: '',
    cell: (row) => (
      <>
        <div className="actions tight">
          {more?.(row)}
          {editor && (canEdit?.(row) ?? true) && (
            <button type="button" className={buttons} onClick={() => setEditing({ row })}>
              {editLabel ? (
                editLabel(row)
              ) : (
                <>
                  Edit<span className="sr-only"> {name(row)}</span>
                </>
              )}
            </button>
          )}
          {remove && (remove.can?.(row) ?? true) && (
            <button
              type="button"
              className={buttons}
              disabled={removal.busy}
              onClick={async () => {
                if (!(await confirm(remove.ask(row)))) return;
                if ((await removal.run(() => remove.run(row).then(() => true))) !== undefined) onChanged();
              }}
            >
              {removeLabel}
              <span className="sr-only"> {name(row)}</span>
            </button>
          )}
        </div>
        {below?.(row)}
      </>
    ),
  };
  return (
    <>
      {addLabel && editor && (
        <div className="actions">
          <button type="button" onClick={() => setEditing({})} disabled={addDisabled}>
            {addLabel}
          </button>
        </div>
      )}
      <ErrorText error={removal.error} />
      <DataTable caption={caption} testId={testId} rows={rows} rowKey={rowKey} rowTestId={rowTestId} empty={empty} columns={[...columns, rowActions]} />
      {editing && editor?.(editing.row, done)}
    </>
  );
}
