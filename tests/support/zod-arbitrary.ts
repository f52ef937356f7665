import fc from 'fast-check';
import type { z } from 'zod';

// Values shaped like a zod schema (zod 4), for fuzz tests that must get past validation to reach
// a handler: strings within their lengths, patterns and formats, numbers in range, enums, arrays,
// objects with their optional keys sometimes left out. Not exhaustive: unknown kinds give any JSON.

type Def = { type: string; [k: string]: any };
const defOf = (s: unknown): Def => (s as { _zod: { def: Def } })._zod.def;
const checksOf = (d: Def) => (d.checks ?? []).map((c: any) => c._zod.def);

function stringArb(d: Def): fc.Arbitrary<string> {
  const checks = checksOf(d);
  const min = checks.find((c: any) => c.check === 'min_length')?.minimum ?? checks.find((c: any) => c.check === 'length_equals')?.length ?? 0;
  const max = checks.find((c: any) => c.check === 'max_length')?.maximum ?? checks.find((c: any) => c.check === 'length_equals')?.length ?? Math.max(min, 40);
  const format = d.format ?? checks.find((c: any) => c.check === 'string_format')?.format;
  const pattern: RegExp | undefined = checks.find((c: any) => c.format === 'regex')?.pattern ?? (d.format === 'regex' ? d.pattern : undefined);
  let base: fc.Arbitrary<string>;
  if (format === 'uuid' || format === 'guid') base = fc.uuid();
  else if (format === 'email') base = fc.emailAddress();
  else if (format === 'url') base = fc.webUrl({ validSchemes: ['https'] });
  else if (format === 'datetime') base = fc.date({ noInvalidDate: true, min: new Date(2000, 0, 1), max: new Date(2100, 0, 1) }).map((x) => x.toISOString());
  else if (pattern) base = fc.stringMatching(new RegExp(pattern.source, pattern.flags.replace(/[igmsuy]/g, (f) => (f === 'u' ? f : ''))));
  else base = fc.string({ minLength: min, maxLength: Math.min(max, min + 60) });
  return base.filter((s) => s.length >= min && s.length <= max);
}

const built = new WeakMap<object, fc.Arbitrary<unknown>>();

export function zodArbitrary(schema: z.ZodType, depth = 0): fc.Arbitrary<unknown> {
  let a = built.get(schema);
  if (!a) built.set(schema, (a = build(schema, depth)));
  return a;
}

function build(schema: z.ZodType, depth: number): fc.Arbitrary<unknown> {
  const d = defOf(schema);
  if (depth > 6) return fc.constant(undefined);
  const inner = (s: unknown) => zodArbitrary(s as z.ZodType, depth + 1);
  switch (d.type) {
    case 'string':
      return stringArb(d);
    case 'number': {
      const checks = checksOf(d);
      const int = checks.some((c: any) => c.format === 'safeint' || c.format === 'int32');
      const lo = checks.find((c: any) => c.check === 'greater_than')?.value ?? -1e6;
      const hi = checks.find((c: any) => c.check === 'less_than')?.value ?? 1e6;
      return int ? fc.integer({ min: Math.ceil(lo), max: Math.floor(hi) }) : fc.double({ min: lo, max: hi, noNaN: true });
    }
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'literal':
      return fc.constantFrom(...(d.values as unknown[]));
    case 'enum':
      return fc.constantFrom(...Object.values(d.entries as Record<string, unknown>));
    case 'optional':
      return fc.option(inner(d.innerType), { nil: undefined, freq: 3 });
    case 'nullable':
      return fc.option(inner(d.innerType), { nil: null, freq: 4 });
    case 'default':
    case 'prefault':
    case 'catch':
    case 'readonly':
    case 'nonoptional':
      return fc.option(inner(d.innerType), { nil: undefined, freq: 4 });
    case 'array': {
      const checks = checksOf(d);
      const min = checks.find((c: any) => c.check === 'min_length')?.minimum ?? 0;
      const max = checks.find((c: any) => c.check === 'max_length')?.maximum ?? 5;
      return fc.array(inner(d.element), { minLength: min, maxLength: Math.min(max, min + 4) });
    }
    case 'object': {
      const shape = d.shape as Record<string, unknown>;
      return fc.record(Object.fromEntries(Object.entries(shape).map(([k, v]) => [k, inner(v)])), { requiredKeys: [] }).map((o) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)));
    }
    case 'union':
      return fc.oneof(...(d.options as unknown[]).map(inner));
    case 'pipe':
      return defOf(d.in).type === 'transform' ? inner(d.out) : inner(d.in);
    case 'record':
      return fc.dictionary(fc.string({ maxLength: 10 }), inner(d.valueType), { maxKeys: 3 });
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}
