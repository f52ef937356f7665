// Values written into the scripts the product generates (upgrade packs, the deploy helper, the
// PowerShell exports): one place for each shell's quoting. Every value comes from a validated
// field; these make it one inert word anyway (docs/decisions.md, "Generated scripts", issue 25).

/**
 * POSIX sh: one single-quoted word, nothing inside expanded (`'` written as `'\''`). A NUL cannot
 * be part of any argument (C strings): refused, never silently cut.
 */
export function shQuote(s: string): string {
  if (s.includes('\0')) throw new Error('a NUL cannot be written into a shell script');
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

const PS_PRINTABLE = /^[\x20-\x7e]*$/;

/**
 * PowerShell: a single-quoted string (`'` doubled) when the value is printable ASCII; otherwise an
 * expression `('' + 'ab' + [char]0x00FC ...)` that spells every other UTF-16 unit by its number.
 * The script stays pure ASCII: Windows PowerShell 5.1 reads a file without BOM in the ANSI code
 * page, where UTF-8 bytes 0x91-0x94 become typographic quotes (which PowerShell also takes as
 * quotes), and typographic quotes in the value itself would end a single-quoted string.
 */
export function psQuote(s: string): string {
  if (PS_PRINTABLE.test(s)) return `'${s.replace(/'/g, "''")}'`;
  const parts: string[] = [];
  let run = '';
  for (const unit of s.split('')) {
    const c = unit.charCodeAt(0);
    if (c >= 0x20 && c <= 0x7e) run += unit;
    else {
      if (run) parts.push(`'${run.replace(/'/g, "''")}'`);
      run = '';
      parts.push(`[char]0x${c.toString(16).toUpperCase().padStart(4, '0')}`);
    }
  }
  if (run) parts.push(`'${run.replace(/'/g, "''")}'`);
  return `('' + ${parts.join(' + ')})`;
}

// letters, marks, digits, punctuation, symbols and the plain space stay; every other character
// (controls, line and paragraph separators, format characters such as bidi overrides, other
// spaces, unassigned) is written as \u{…}
const COMMENT_UNSAFE = /[^\p{L}\p{M}\p{N}\p{P}\p{S} ]/gu;

/** A value inside a `#` comment line of a shell script: always one line, nothing invisible. */
export const commentText = (s: string): string => s.replace(COMMENT_UNSAFE, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);

/**
 * A value inside a PowerShell comment (line or `<# … #>` block): pure ASCII (see psQuote), one line,
 * and never `#>`, which would end a block comment.
 */
export const psCommentText = (s: string): string =>
  s.replace(/[^\x20-\x7e]/gu, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`).replace(/#>/g, '#\\>');

/** JSON whose every character is printable ASCII (other characters as \u escapes): for a PowerShell here-string. */
export const asciiJson = (value: unknown): string =>
  JSON.stringify(value, null, 2).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
