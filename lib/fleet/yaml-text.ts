import { stringify } from 'yaml';

// YAML the fleet plane hands to other tools (tctl's role, an agent's teleport.yaml). Those read
// YAML 1.1, where a plain `yes`, `no`, `on`, `off`, `y`, `n`, `~`, `0755`, `1e3` or `2024-01-01`
// is a boolean, null, number or date, and client codes, host names and the like can be any of
// those. Every string is therefore written double-quoted, which every YAML version reads as the
// same string; keys are the product's own words and stay plain. YAML 1.1 also takes NEL, LS and
// PS as line breaks (folded inside a quoted scalar): written as escapes, as is a BOM.
const YAML11_BREAKS = /[\u0085\u2028\u2029\ufeff]/g;

export const yamlText = (value: unknown): string =>
  stringify(value, { defaultStringType: 'QUOTE_DOUBLE', defaultKeyType: 'PLAIN', lineWidth: 0 }).replace(YAML11_BREAKS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
