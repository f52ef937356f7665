import type { ReactNode } from 'react';
import { say } from './words';

// Loading, empty and error states of every screen (both apps): a loading line screen readers
// hear (role=status, aria-busy), an empty state that says what is missing, and an error that
// says what happened in words, shows the correlation id and offers to try again.

/** A failure's correlation id, when the API gave one. */
export const correlationOf = (error: unknown): string | undefined => {
  const id = (error as { body?: { correlationId?: unknown } } | undefined)?.body?.correlationId;
  return typeof id === 'string' ? id : undefined;
};

/** An error in words, inline (a form, a dialog, an action). */
export function ErrorText({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p role="alert" className="error">
      {say(error)}
    </p>
  );
}

/** What a screen shows instead of its content when loading it failed: the words, the correlation id, Retry. */
export function ErrorState({ error, onRetry, title = 'This could not be loaded' }: { error: unknown; onRetry?: () => void; title?: string }) {
  const id = correlationOf(error);
  return (
    <div className="state error-state" role="alert" data-testid="error-state">
      <p className="state-title">{title}</p>
      <p>{say(error, { withCorrelation: false })}</p>
      {id && (
        <p className="hint">
          Correlation id <code data-testid="correlation-id">{id}</code> (give it to your administrator)
        </p>
      )}
      {onRetry && (
        <div className="actions">
          <button type="button" onClick={onRetry}>
            Retry
          </button>
        </div>
      )}
    </div>
  );
}

/** A screen or a part of it still loading. */
export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p className="state loading" role="status" aria-busy="true" data-testid="loading">
      <span className="spinner" aria-hidden="true" /> {label}
    </p>
  );
}

/** Nothing to show, and why. */
export function Empty({ children }: { children: ReactNode }) {
  return (
    <p className="state empty" data-testid="empty">
      {children}
    </p>
  );
}

/**
 * The three states of a loaded part in one: loading (nothing yet), error (nothing yet, or the
 * last refresh failed over old data: the data stays, the error shows above it), else the content.
 */
export function Loaded<T>({ data, error, onRetry, loading, children }: { data: T | undefined; error?: unknown; onRetry?: () => void; loading?: string; children: (data: T) => ReactNode }) {
  if (data === undefined) return error ? <ErrorState error={error} onRetry={onRetry} /> : <Loading label={loading} />;
  return (
    <>
      {error ? <ErrorState error={error} onRetry={onRetry} title="The latest refresh failed: this is what was shown before" /> : null}
      {children(data)}
    </>
  );
}

/** A button that shows its action running (spinner, aria-busy, disabled) without changing its name. */
export function Busy({ busy, children, className, type = 'button', onClick, disabled, ...rest }: { busy?: boolean; children: ReactNode; className?: string; type?: 'button' | 'submit'; onClick?: () => void; disabled?: boolean; 'data-testid'?: string }) {
  return (
    <button type={type} className={className} onClick={onClick} disabled={disabled || busy} aria-busy={busy || undefined} {...rest}>
      {busy && <span className="spinner" aria-hidden="true" />}
      {children}
    </button>
  );
}
