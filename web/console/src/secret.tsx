import { useEffect, useState } from 'react';

// A password shown once (a LAPS reveal, a generated reset password): drawn so that look-alike
// characters differ, copyable, readable aloud character by character (the way helpdesks hand a
// password over the phone), hidden after 30 s. It lives in the component's state only: no
// storage, no URL, no history.

export const SECRET_SECONDS = 30;

const NATO: Record<string, string> = {
  a: 'Alfa', b: 'Bravo', c: 'Charlie', d: 'Delta', e: 'Echo', f: 'Foxtrot', g: 'Golf', h: 'Hotel', i: 'India', j: 'Juliett', k: 'Kilo', l: 'Lima', m: 'Mike',
  n: 'November', o: 'Oscar', p: 'Papa', q: 'Quebec', r: 'Romeo', s: 'Sierra', t: 'Tango', u: 'Uniform', v: 'Victor', w: 'Whiskey', x: 'X-ray', y: 'Yankee', z: 'Zulu',
};
const DIGITS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];
const SYMBOLS: Record<string, string> = {
  '!': 'exclamation mark', '"': 'double quote', '#': 'hash', $: 'dollar', '%': 'percent', '&': 'ampersand', "'": 'apostrophe', '(': 'open parenthesis', ')': 'close parenthesis',
  '*': 'asterisk', '+': 'plus', ',': 'comma', '-': 'hyphen', '.': 'full stop', '/': 'slash', ':': 'colon', ';': 'semicolon', '<': 'less than', '=': 'equals', '>': 'greater than',
  '?': 'question mark', '@': 'at sign', '[': 'open bracket', '\\': 'backslash', ']': 'close bracket', '^': 'caret', _: 'underscore', '`': 'backtick', '{': 'open brace',
  '|': 'vertical bar', '}': 'close brace', '~': 'tilde', ' ': 'space',
};

/** How one character is said aloud: "capital B as in Bravo", "seven", "underscore". */
export function spoken(ch: string): string {
  if (/[a-z]/.test(ch)) return `small ${ch} as in ${NATO[ch]}`;
  if (/[A-Z]/.test(ch)) return `capital ${ch} as in ${NATO[ch.toLowerCase()]}`;
  if (/\d/.test(ch)) return DIGITS[Number(ch)];
  return SYMBOLS[ch] ?? `the character ${ch} (U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')})`;
}

/** Digits, upper case, lower case and symbols drawn apart, in a font where 0/O and 1/l/I differ. */
export function SecretText({ value }: { value: string }) {
  return (
    <code className="secret" data-testid="secret">
      {[...value].map((ch, i) => (
        <span key={i} className={/\d/.test(ch) ? 'c-digit' : /[A-Z]/.test(ch) ? 'c-upper' : /[a-z]/.test(ch) ? 'c-lower' : 'c-symbol'}>
          {ch}
        </span>
      ))}
    </code>
  );
}

/** A BitLocker recovery password (issue 33): its groups of six digits, each drawn apart, as the recovery screen asks for them. */
export const digitGroups = (value: string) => value.split('-').filter(Boolean);
export function GroupedDigits({ value }: { value: string }) {
  return (
    <code className="secret grouped" data-testid="secret">
      {digitGroups(value).map((g, i) => (
        <span key={i} className="c-digit secret-group" data-testid="secret-group">
          {g}
        </span>
      ))}
    </code>
  );
}

/**
 * The secret with its copy button, its read-out and its countdown; after 30 s it calls onExpired
 * (the owner drops the value from its state). `grouped`: a recovery password, shown and read out
 * group by group.
 */
export function SecretView({ label, value, onExpired, grouped = false }: { label: string; value: string; onExpired: () => void; grouped?: boolean }) {
  const [left, setLeft] = useState(SECRET_SECONDS);
  const [copied, setCopied] = useState<'yes' | 'no'>();
  const [readOut, setReadOut] = useState(false);
  useEffect(() => {
    const until = Date.now() + SECRET_SECONDS * 1000;
    const hide = setTimeout(onExpired, SECRET_SECONDS * 1000);
    const tick = setInterval(() => setLeft(Math.max(0, Math.ceil((until - Date.now()) / 1000))), 1000);
    return () => {
      clearTimeout(hide);
      clearInterval(tick);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [value]);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied('yes');
    } catch {
      setCopied('no');
    }
  };
  return (
    <div className="secret-box">
      <div className="muted">{label}</div>
      {grouped ? <GroupedDigits value={value} /> : <SecretText value={value} />}
      {readOut &&
        (grouped ? (
          <ol className="readout" data-testid="readout" aria-label="The recovery key, group by group">
            {digitGroups(value).map((g, i) => (
              <li key={i}>
                Group {i + 1}: {[...g].map(spoken).join(' ')}
              </li>
            ))}
          </ol>
        ) : (
          <ol className="readout" data-testid="readout" aria-label="The password, character by character">
            {[...value].map((ch, i) => (
              <li key={i}>{spoken(ch)}</li>
            ))}
          </ol>
        ))}
      <div className="actions">
        <button type="button" onClick={copy}>
          Copy
        </button>
        <button type="button" className="secondary" aria-pressed={readOut} onClick={() => setReadOut(!readOut)}>
          Read out
        </button>
        <span className="muted" aria-live="polite">
          {copied === 'yes' ? 'Copied. ' : copied === 'no' ? 'Copy failed: select the text instead. ' : ''}Hidden in {left} s.
        </span>
      </div>
      <p className="hint">
        {grouped
          ? 'Type each group of six digits into the recovery screen in order; the screen adds the hyphens itself.'
          : 'Digits are blue, capitals bold, symbols orange: 0 (zero) and O, 1 and l and I look different in this font.'}
      </p>
    </div>
  );
}
