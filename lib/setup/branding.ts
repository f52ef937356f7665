import { z } from 'zod';
import { plainText } from '../plain-text';
import type { AuditActor, AuditChain } from '../audit';
import { conflict, isApiError } from '../errors';
import type { Store } from '../store';
import { getRecord, putRecord } from '../store/records';

// Instance identification (console spec, Instance identification): a title of 1 to 60 plain
// characters, an accent colour and 'show on the sign-in page' (default off). Operators see the
// title in the top bar and as the tab-title prefix; anonymous visitors only when the flag is on.
// settings.manage (+ step-up) to change; audited `settings.branding` with old and new values.

/** Plain text: no control, format (bidi overrides, zero-width), lone surrogate or line/paragraph separator character. */
const PLAIN = /^[^\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]*$/u;

export const brandingTitleSchema = plainText()
  .transform((s) => s.normalize('NFC').trim())
  // counted in characters (code points), not UTF-16 units: 60 emoji are 60 characters
  .refine((s) => [...s].length >= 1 && [...s].length <= 60, 'from 1 to 60 characters')
  .refine((s) => PLAIN.test(s), 'plain text: no control, format or separator characters');

/** `#rrggbb`, stored lower-case. */
export const accentColourSchema = z
  .string()
  .regex(/^#[0-9a-fA-F]{6}$/, 'a colour as #rrggbb')
  .transform((s) => s.toLowerCase());

export const brandingInputSchema = z.object({
  title: brandingTitleSchema,
  accentColour: accentColourSchema,
  showOnSignIn: z.boolean().default(false),
  /** the version the editor read (0: never saved); absent: last write wins */
  version: z.number().int().min(0).optional(),
});
export type BrandingInput = z.infer<typeof brandingInputSchema>;

export interface Branding {
  title: string | null;
  accentColour: string;
  showOnSignIn: boolean;
}

/** Before any save: no title (the top bar shows the domain), the app's own accent, hidden from visitors. */
export const DEFAULT_BRANDING: Branding = { title: null, accentColour: '#1f5fbf', showOnSignIn: false };

const KEY = { pk: 'INSTANCE', sk: 'BRANDING' };

export async function readBranding(store: Store): Promise<{ branding: Branding; version: number }> {
  const rec = await getRecord<Branding>(store, KEY.pk, KEY.sk);
  return rec ? { branding: { ...DEFAULT_BRANDING, ...rec.data }, version: rec.version } : { branding: DEFAULT_BRANDING, version: 0 };
}

/** What an anonymous visitor sees: the title and accent only when the flag is on, else nothing. */
export async function publicBranding(store: Store): Promise<{ title?: string; accentColour?: string }> {
  const { branding } = await readBranding(store);
  return branding.showOnSignIn && branding.title ? { title: branding.title, accentColour: branding.accentColour } : {};
}

export interface BrandingChange {
  store: Store;
  audit: Pick<AuditChain, 'append'>;
  actor: AuditActor;
  correlationId: string;
}

/** Save the instance identification; a stale version is refused `409 version_conflict` (audited, nothing changed). */
export async function saveBranding(ctx: BrandingChange, input: BrandingInput): Promise<{ branding: Branding; version: number }> {
  const target = { id: 'branding', kind: 'settings' };
  try {
    const current = await readBranding(ctx.store);
    if (input.version !== undefined && input.version !== current.version) throw conflict('version_conflict', { currentVersion: current.version });
    const next: Branding = { title: input.title, accentColour: input.accentColour, showOnSignIn: input.showOnSignIn };
    if (!(await putRecord(ctx.store, KEY.pk, KEY.sk, next, { expectVersion: current.version }))) {
      throw conflict('version_conflict', { currentVersion: (await readBranding(ctx.store)).version });
    }
    await ctx.audit.append({ event: 'settings.branding', outcome: 'success', actor: ctx.actor, target, correlationId: ctx.correlationId, details: { old: current.branding, new: next } });
    return { branding: next, version: current.version + 1 };
  } catch (e) {
    if (isApiError(e)) await ctx.audit.append({ event: 'settings.branding', outcome: 'denied', reason: e.code, actor: ctx.actor, target, correlationId: ctx.correlationId, details: e.details });
    throw e;
  }
}
