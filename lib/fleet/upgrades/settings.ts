import { z } from 'zod';
import type { Store } from '../../store';
import { getRecord, putRecord } from '../../store/records';

// Upgrade settings (fleet spec, "Upgrade settings and plans"): the tag consoles should run, an
// optional image repository, and the delay after which a planned upgrade not yet visible raises
// `console_upgrade_overdue`. One record (pk UPGRADES, sk SETTINGS). The tag and repository end
// up in generated shell scripts: both follow the container image grammar, nothing else.

export const DEFAULT_ALERT_AFTER_DAYS = 7;
export const MAX_ALERT_AFTER_DAYS = 365;

/** An image tag: the OCI distribution grammar (no whitespace, no shell character by construction). */
export const IMAGE_TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
/** An image repository without tag or digest: optional registry host[:port]/, then lowercase path components. */
const COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
export const IMAGE_REPOSITORY = new RegExp(`^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::[0-9]{1,5})?/)?${COMPONENT}(?:/${COMPONENT})*$`);
const SHELL = /[`$&|;<>(){}\[\]*?!~#'"\\]/;

export const targetTagSchema = z
  .string()
  .max(128)
  .refine((t) => !/\s/.test(t), 'no whitespace in a tag')
  .refine((t) => !SHELL.test(t), 'no shell characters in a tag')
  .refine((t) => t.toLowerCase() !== 'latest', '`latest` names no version: give the tag consoles should run')
  .refine((t) => t === '' || IMAGE_TAG.test(t), 'an image tag: letters, digits, `_`, `.`, `-` (at most 128, not starting with `.` or `-`)');

export const repositorySchema = z
  .string()
  .max(255)
  .refine((r) => !/\s/.test(r), 'no whitespace in a repository')
  .refine((r) => !SHELL.test(r), 'no shell characters in a repository')
  .refine((r) => r === '' || !/[@]|:[^/]*$/.test(r), 'the repository without a tag or digest (the tag is the target tag)')
  .refine((r) => r === '' || IMAGE_REPOSITORY.test(r), 'an image repository, e.g. registry.example.com/hdc/console');

export const upgradeSettingsSchema = z.object({
  /** empty: versions are not compared */
  targetTag: targetTagSchema,
  /** empty or absent: each host keeps the repository of its own environment file */
  repository: repositorySchema.nullable().optional(),
  alertAfterDays: z.number().int().min(1).max(MAX_ALERT_AFTER_DAYS).optional(),
});
export type UpgradeSettingsInput = z.output<typeof upgradeSettingsSchema>;

export interface UpgradeSettings {
  targetTag: string | null;
  repository: string | null;
  alertAfterDays: number;
  updatedAt?: string;
  updatedBy?: string;
}

export const DEFAULT_UPGRADE_SETTINGS: UpgradeSettings = { targetTag: null, repository: null, alertAfterDays: DEFAULT_ALERT_AFTER_DAYS };

const PK = 'UPGRADES';
const SK = 'SETTINGS';

export async function readUpgradeSettings(store: Store): Promise<UpgradeSettings> {
  return { ...DEFAULT_UPGRADE_SETTINGS, ...(await getRecord<UpgradeSettings>(store, PK, SK))?.data };
}

/** PUT semantics: the whole settings; an absent delay is the default, an absent repository none. */
export function normalizeSettings(input: UpgradeSettingsInput): UpgradeSettings {
  return { targetTag: input.targetTag || null, repository: input.repository || null, alertAfterDays: input.alertAfterDays ?? DEFAULT_ALERT_AFTER_DAYS };
}

export async function writeUpgradeSettings(store: Store, s: UpgradeSettings): Promise<void> {
  await putRecord(store, PK, SK, s);
}

/** The argument of upgrade.sh: `<repository>:<tag>`, or the tag alone (the host keeps its repository). */
export const imageArgument = (s: Pick<UpgradeSettings, 'repository'>, tag: string): string => (s.repository ? `${s.repository}:${tag}` : tag);
