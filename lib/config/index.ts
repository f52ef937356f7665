import fs from 'node:fs';
import type * as z from 'zod/mini';
import { processEnvironment, type Environment } from './environment';
import { configSchema, fleetEnvSchema, INERT_KEYS, NAMED_ENV, OBSOLETE_KEYS, type Config, type FleetConfig } from './fields';

// The one configuration loader: the console's (and its password service's) Section:Key tree from
// a JSON file and the environment, and the fleet plane's environment variables, both validated by
// the fields of ./fields.ts; an invalid value names its key, never its value.
export type { Config, FleetConfig, Level } from './fields';
export { LEVELS } from './fields';
export type { Environment } from './environment';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

export interface LoadedConfig {
  config: Config;
  warnings: string[];
}

const SECTIONS = new Set(Object.keys(configSchema.shape));

function flatten(obj: unknown, prefix: string, out: Map<string, unknown>) {
  if (obj && typeof obj === 'object' && !Array.isArray(obj)) {
    for (const [k, v] of Object.entries(obj)) flatten(v, prefix ? `${prefix}:${k}` : k, out);
  } else out.set(prefix, obj);
}

function knownLeafKeys(): Set<string> {
  const keys = new Set<string>();
  const walk = (schema: z.ZodMiniType, prefix: string) => {
    let s: any = schema;
    while (s?.def?.innerType || s?.def?.in) s = s.def.innerType ?? s.def.in; // unwrap default/pipe
    if (s?.def?.type === 'object') {
      for (const [k, v] of Object.entries(s.def.shape)) walk(v as z.ZodMiniType, prefix ? `${prefix}:${k}` : k);
    } else keys.add(prefix);
  };
  walk(configSchema, '');
  return keys;
}
const KNOWN = knownLeafKeys();

/** Collect `Section:Key` values: config file (JSON, nested), then environment (`Section__Key`, `HDC_Section__Key`, named HDC_* variables). */
export function collectSources(env: Environment, file?: string): Map<string, unknown> {
  const values = new Map<string, unknown>();
  if (file) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (e) {
      throw new ConfigError([`config file ${file}: ${(e as Error).message}`]);
    }
    flatten(parsed, '', values);
  }
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (NAMED_ENV[name]) {
      values.set(NAMED_ENV[name], value);
      continue;
    }
    const bare = name.startsWith('HDC_') ? name.slice(4) : name;
    if (!bare.includes('__')) continue;
    const key = bare.split('__').join(':');
    if (SECTIONS.has(key.split(':')[0]) || OBSOLETE_KEYS[key] || INERT_KEYS[key]) values.set(key, value);
  }
  return values;
}

/** Load and validate the configuration. Throws ConfigError (naming every bad key) when invalid. */
export function loadConfig(env: Environment = processEnvironment()): LoadedConfig {
  const values = collectSources(env, env.HDC_CONFIG_FILE);
  const warnings: string[] = [];
  const nested: Record<string, any> = {};
  for (const [key, value] of values) {
    if (OBSOLETE_KEYS[key]) {
      warnings.push(`obsolete configuration key ${key} is ignored (${OBSOLETE_KEYS[key]})`);
      continue;
    }
    if (INERT_KEYS[key]) {
      warnings.push(`configuration key ${key} no longer does anything (${INERT_KEYS[key]})`);
      continue;
    }
    if (!KNOWN.has(key)) {
      warnings.push(`unknown configuration key ${key} is ignored`);
      continue;
    }
    const parts = key.split(':');
    let node = nested;
    for (const p of parts.slice(0, -1)) node = node[p] ??= {};
    node[parts[parts.length - 1]] = value;
  }
  const result = configSchema.safeParse(nested);
  if (!result.success) {
    throw new ConfigError(result.error.issues.map((i) => `${i.path.join(':')}: ${i.message}`));
  }
  return { config: result.data, warnings };
}

export class FleetConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid fleet configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'FleetConfigError';
  }
}

/** The fleet plane's configuration; throws FleetConfigError naming every bad variable (never its value). */
export function loadFleetConfig(env: Environment = processEnvironment()): FleetConfig {
  const r = fleetEnvSchema.safeParse(env);
  if (!r.success) throw new FleetConfigError(r.error.issues.map((i) => `${i.path.join('.') || '(env)'}: ${i.message}`));
  return r.data;
}
