import { z } from 'zod';

// Field rules (issue 25, item 3): every name, label, token, ticket, reason or header-bound value
// refuses control characters with 400 `validation_failed` naming the field (the route's zod
// failure, lib/http/middlewares/validate.ts). One place for the rule, used by every such schema of
// the console and the fleet plane. The check runs on the raw value, before any trim: a name sent
// as "x\r\n" is refused, not silently cut.

/** C0 (TAB, CR and LF included), DEL, C1, and the Unicode line and paragraph separators (U+2028, U+2029). */
export const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
/** The same without TAB, LF and CR, which a multi-line text (notes, a reason, a comment) may hold. */
const CONTROL_IN_MULTILINE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u2028\u2029]/;

export const hasControlCharacters = (s: string) => CONTROL_CHARACTERS.test(s);

/** A single-line string (name, label, token, ticket, header value): chain trim/min/max on it. */
export const plainText = () => z.string().refine((s) => !CONTROL_CHARACTERS.test(s), 'no control characters');

/** A multi-line string (notes, reasons, comments): line breaks and tabs, no other control character. */
export const multilineText = () => z.string().refine((s) => !CONTROL_IN_MULTILINE.test(s), 'no control characters except line breaks and tabs');
