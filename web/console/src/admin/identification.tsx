import { useState } from 'react';
import { get, put } from '../api';
import { Busy, ErrorText, Loaded, useAction, useLoaded, useStepUp } from '../ui';

interface Branding {
  title: string | null;
  accentColour: string;
  showOnSignIn: boolean;
}

/** Instance identification: the title operators see in the top bar and tab, its colour, and whether the sign-in page shows it. */
export function Identification() {
  const { data, error, reload } = useLoaded('branding', () => get<{ branding: Branding; version: number }>('/api/settings/branding'));
  // "Saved" outlives the form, which starts again from the saved values (and their new version)
  const [saved, setSaved] = useState(false);
  return (
    <Loaded data={data} error={error} onRetry={reload}>
      {(loaded) => <IdentificationForm key={loaded.version} loaded={loaded} saved={saved} setSaved={setSaved} onSaved={reload} />}
    </Loaded>
  );
}

function IdentificationForm({ loaded, saved, setSaved, onSaved }: { loaded: { branding: Branding; version: number }; saved: boolean; setSaved: (s: boolean) => void; onSaved: () => void }) {
  const [title, setTitle] = useState(loaded.branding.title ?? '');
  const [accent, setAccent] = useState(loaded.branding.accentColour);
  const [show, setShow] = useState(loaded.branding.showOnSignIn);
  const { withStepUp } = useStepUp();
  const a = useAction();
  return (
    <form
      aria-label="Instance identification"
      onSubmit={async (e) => {
        e.preventDefault();
        setSaved(false);
        const r = await a.run(() => withStepUp(() => put('/api/settings/branding', { title, accentColour: accent, showOnSignIn: show, version: loaded.version })));
        if (r) {
          setSaved(true);
          onSaved();
        }
      }}
    >
      <label>
        Title <span className="hint">(1 to 60 characters, plain text; shown in the top bar and the tab title; without one, the directory's domain)</span>
        <input name="branding-title" required maxLength={60} placeholder="e.g. Acme helpdesk" value={title} onChange={(e) => setTitle(e.target.value)} />
      </label>
      <label>
        Accent colour <span className="hint">(the top bar; its text turns black or white, whichever reads better)</span>
        <input name="branding-accent" type="color" value={accent} onChange={(e) => setAccent(e.target.value)} />
      </label>
      <label className="check">
        <input name="branding-show" type="checkbox" checked={show} onChange={(e) => setShow(e.target.checked)} />
        Show the title on the sign-in page (visitors who are not signed in see it)
      </label>
      <ErrorText error={a.error} />
      {saved && <p role="status">Saved. Operators see the new title at their next page load.</p>}
      <Busy type="submit" busy={a.busy}>
        Save identification
      </Busy>
    </form>
  );
}
