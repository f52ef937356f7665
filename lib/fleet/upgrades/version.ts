import semver from 'semver';

// Console drift (fleet spec, "Console drift and upgrade plans"): semantic versioning with a
// leading `v` ignored, pre-releases below their release and build metadata ignored; when either
// side is not a full version number (a branch or build tag, `1.4`), an identical tag is up to
// date and anything else cannot be ordered.

export type Drift = 'up_to_date' | 'behind' | 'unknown';

/** The semantic version a tag names, or undefined (`v1.2.3` → 1.2.3; `1.4`, `main`, `=1.2.3` → undefined). */
export function parseVersion(tag: string): semver.SemVer | undefined {
  const t = tag.startsWith('v') ? tag.slice(1) : tag;
  if (!/^\d/.test(t) || /\s/.test(t)) return undefined; // semver also takes `=1.2.3` and trims spaces; the spec only drops a `v`
  const v = semver.parse(t, { loose: false });
  return v ?? undefined;
}

/** -1, 0, 1 by semantic versioning; 0 for an identical non-version tag; undefined when they cannot be ordered. */
export function compareVersions(a: string, b: string): -1 | 0 | 1 | undefined {
  const va = parseVersion(a);
  const vb = parseVersion(b);
  if (va && vb) return semver.compare(va, vb); // compare() ignores build metadata
  return a === b ? 0 : undefined;
}

/**
 * The badge of a console against the target tag. `version`: the version of its last successful
 * poll (a console that failed its last poll keeps it); null/undefined: never answered.
 */
export function driftOf(version: string | null | undefined, target: string | null | undefined): Drift {
  if (!version || !target) return 'unknown';
  const c = compareVersions(version, target);
  if (c === undefined) return 'unknown';
  return c >= 0 ? 'up_to_date' : 'behind';
}

export const DRIFT_LABELS: Record<Drift, string> = { up_to_date: 'Up to date', behind: 'Behind', unknown: 'Unknown' };
