// The expression language of the store port (a subset of DynamoDB's): conditions, key conditions,
// filters, updates and projections, evaluated over plain items. The DynamoDB adapter hands the
// expressions to DynamoDB; the SQLite adapter evaluates them here, so both answer the same.
//
// Conditions: = <> < <= > >= BETWEEN IN, attribute_exists, attribute_not_exists, begins_with,
// contains, size(); AND OR NOT and parentheses; paths of names, #placeholders and dots.
// Updates: SET p = v | v + v | v - v | if_not_exists(p, v) | list_append(a, b), REMOVE p, ADD p n.

export type Item = Record<string, any>;
export interface ExpressionContext {
  names?: Record<string, string>;
  values?: Record<string, unknown>;
}

export class ExpressionError extends Error {
  override name = 'ValidationException';
}

function tokenize(expr: string): string[] {
  const out: string[] = [];
  const re = /\s*(<>|<=|>=|[()=<>,+-]|[#:]?[A-Za-z_][A-Za-z0-9_]*(?:\.[#]?[A-Za-z_][A-Za-z0-9_]*)*)/y;
  let i = 0;
  while (i < expr.length) {
    re.lastIndex = i;
    const m = re.exec(expr);
    if (!m) {
      if (/^\s*$/.test(expr.slice(i))) break;
      throw new ExpressionError(`cannot read the expression at "${expr.slice(i, i + 20)}"`);
    }
    out.push(m[1]);
    i = re.lastIndex;
  }
  return out;
}

/** A path's parts with #placeholders replaced. */
function pathParts(tok: string, ctx: ExpressionContext): string[] {
  return tok.split('.').map((p) => {
    if (!p.startsWith('#')) return p;
    const n = ctx.names?.[p];
    if (n === undefined) throw new ExpressionError(`name ${p} is not defined`);
    return n;
  });
}

const readPath = (item: Item | undefined, parts: string[]): unknown =>
  parts.reduce<any>((o, k) => (o !== null && typeof o === 'object' && !Array.isArray(o) ? o[k] : undefined), item);

function valueOf(tok: string, ctx: ExpressionContext): unknown {
  if (!(ctx.values && tok in ctx.values)) throw new ExpressionError(`value ${tok} is not defined`);
  return ctx.values[tok];
}

const typeOf = (v: unknown) => (Buffer.isBuffer(v) || v instanceof Uint8Array ? 'B' : typeof v === 'number' ? 'N' : typeof v === 'string' ? 'S' : 'other');

/** DynamoDB compares numbers with numbers and strings with strings (by bytes); other pairs never match. */
function compare(a: unknown, b: unknown): number | undefined {
  const t = typeOf(a);
  if (t !== typeOf(b) || t === 'other') return undefined;
  if (t === 'N') return (a as number) - (b as number);
  if (t === 'S') return Buffer.compare(Buffer.from(a as string), Buffer.from(b as string));
  return Buffer.compare(Buffer.from(a as Uint8Array), Buffer.from(b as Uint8Array));
}

const sameValue = (a: unknown, b: unknown) => a !== undefined && b !== undefined && stableJson(a) === stableJson(b);

function stableJson(v: unknown): string {
  if (v instanceof Uint8Array) return `b:${Buffer.from(v).toString('base64')}`;
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v && typeof v === 'object') {
    if (v instanceof Set) return `set:${[...v].map(stableJson).sort().join(',')}`;
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((v as Item)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

class Parser {
  private p = 0;
  constructor(
    private readonly t: string[],
    private readonly ctx: ExpressionContext,
    private readonly expr: string,
  ) {}
  peek = (o = 0) => this.t[this.p + o];
  take(want?: string): string {
    const v = this.t[this.p++];
    if (v === undefined || (want !== undefined && v.toUpperCase() !== want)) throw new ExpressionError(`expected ${want ?? 'more'} in "${this.expr}"`);
    return v;
  }
  done() {
    if (this.p !== this.t.length) throw new ExpressionError(`unexpected "${this.t[this.p]}" in "${this.expr}"`);
  }
  /** An operand: a value, a path, or size(path). */
  operand(item: Item | undefined): unknown {
    const tok = this.take();
    if (tok.startsWith(':')) return valueOf(tok, this.ctx);
    if (tok.toLowerCase() === 'size' && this.peek() === '(') {
      this.take('(');
      const v = this.operand(item);
      this.take(')');
      if (typeof v === 'string') return Buffer.byteLength(v);
      if (Array.isArray(v)) return v.length;
      if (v instanceof Set) return v.size;
      if (v instanceof Uint8Array) return v.length;
      if (v && typeof v === 'object') return Object.keys(v).length;
      return undefined;
    }
    return readPath(item, pathParts(tok, this.ctx));
  }
  condition(item: Item | undefined): boolean {
    let v = this.conjunction(item);
    while (this.peek()?.toUpperCase() === 'OR') {
      this.take();
      const r = this.conjunction(item);
      v = v || r;
    }
    return v;
  }
  private conjunction(item: Item | undefined): boolean {
    let v = this.primary(item);
    while (this.peek()?.toUpperCase() === 'AND') {
      this.take();
      const r = this.primary(item);
      v = v && r;
    }
    return v;
  }
  private primary(item: Item | undefined): boolean {
    const tok = this.peek();
    if (tok === '(') {
      this.take();
      const v = this.condition(item);
      this.take(')');
      return v;
    }
    if (tok?.toUpperCase() === 'NOT') {
      this.take();
      return !this.primary(item);
    }
    const fn = tok?.toLowerCase();
    if (this.peek(1) === '(' && (fn === 'attribute_exists' || fn === 'attribute_not_exists' || fn === 'begins_with' || fn === 'contains')) {
      this.take();
      this.take('(');
      const a = fn.startsWith('attribute_') ? readPath(item, pathParts(this.take(), this.ctx)) : this.operand(item);
      let b: unknown;
      if (!fn.startsWith('attribute_')) {
        this.take(',');
        b = this.operand(item);
      }
      this.take(')');
      if (fn === 'attribute_exists') return a !== undefined;
      if (fn === 'attribute_not_exists') return a === undefined;
      if (fn === 'begins_with') return typeof a === 'string' && typeof b === 'string' && a.startsWith(b);
      if (typeof a === 'string') return typeof b === 'string' && a.includes(b);
      if (Array.isArray(a)) return a.some((x) => sameValue(x, b));
      if (a instanceof Set) return [...a].some((x) => sameValue(x, b));
      return false;
    }
    const left = this.operand(item);
    const op = this.take().toUpperCase();
    if (op === 'BETWEEN') {
      const lo = this.operand(item);
      this.take('AND');
      const hi = this.operand(item);
      const a = compare(left, lo);
      const b = compare(left, hi);
      return a !== undefined && b !== undefined && a >= 0 && b <= 0;
    }
    if (op === 'IN') {
      this.take('(');
      const options = [this.operand(item)];
      while (this.peek() === ',') {
        this.take();
        options.push(this.operand(item));
      }
      this.take(')');
      return options.some((o) => sameValue(left, o));
    }
    const right = this.operand(item);
    if (op === '=') return sameValue(left, right);
    if (op === '<>') return left !== undefined && right !== undefined && !sameValue(left, right);
    const c = compare(left, right);
    if (c === undefined) return false;
    if (op === '<') return c < 0;
    if (op === '<=') return c <= 0;
    if (op === '>') return c > 0;
    if (op === '>=') return c >= 0;
    throw new ExpressionError(`operator ${op} in "${this.expr}"`);
  }
}

/** Does `item` (undefined: no item) meet the condition? */
export function meetsCondition(expr: string | undefined, item: Item | undefined, ctx: ExpressionContext): boolean {
  if (!expr) return true;
  const parser = new Parser(tokenize(expr), ctx, expr);
  const v = parser.condition(item);
  parser.done();
  return v;
}

/** A key condition: the partition's value and the sort key's range (as SQL can ask for it). */
export interface KeyRange {
  pk: string;
  sk?: { op: '=' | '<' | '<=' | '>' | '>='; value: string } | { op: 'between'; low: string; high: string } | { op: 'begins_with'; prefix: string };
}

export function keyRange(expr: string, ctx: ExpressionContext): KeyRange {
  const t = tokenize(expr);
  const name = (tok: string) => pathParts(tok, ctx).join('.');
  const str = (tok: string) => {
    const v = valueOf(tok, ctx);
    if (typeof v !== 'string') throw new ExpressionError('key values are strings');
    return v;
  };
  let pk: string | undefined;
  let sk: KeyRange['sk'];
  let i = 0;
  while (i < t.length) {
    if (t[i].toUpperCase() === 'AND') {
      i++;
      continue;
    }
    if (t[i].toLowerCase() === 'begins_with' && t[i + 1] === '(' && name(t[i + 2]) === 'sk' && t[i + 3] === ',' && t[i + 5] === ')') {
      sk = { op: 'begins_with', prefix: str(t[i + 4]) };
      i += 6;
      continue;
    }
    const attr = name(t[i]);
    const op = t[i + 1]?.toUpperCase();
    if (attr === 'pk' && op === '=') {
      pk = str(t[i + 2]);
      i += 3;
    } else if (attr === 'sk' && op === 'BETWEEN' && t[i + 3]?.toUpperCase() === 'AND') {
      sk = { op: 'between', low: str(t[i + 2]), high: str(t[i + 4]) };
      i += 5;
    } else if (attr === 'sk' && (op === '=' || op === '<' || op === '<=' || op === '>' || op === '>=')) {
      sk = { op, value: str(t[i + 2]) };
      i += 3;
    } else {
      throw new ExpressionError(`unsupported key condition "${expr}"`);
    }
  }
  if (pk === undefined) throw new ExpressionError(`a key condition names the partition: "${expr}"`);
  return { pk, sk };
}

function writePath(item: Item, parts: string[], value: unknown) {
  let o = item;
  for (const k of parts.slice(0, -1)) {
    if (o[k] === null || typeof o[k] !== 'object' || Array.isArray(o[k])) throw new ExpressionError('the document path does not exist');
    o = o[k];
  }
  if (value === undefined) delete o[parts[parts.length - 1]];
  else o[parts[parts.length - 1]] = value;
}

/** The item after an update expression (a new item from the key when there was none). */
export function applyUpdate(expr: string, current: Item | undefined, key: Item, ctx: ExpressionContext): Item {
  const item: Item = structuredClone(current ?? key);
  const t = tokenize(expr);
  const parser = new Parser(t, ctx, expr);
  // the operands read the item as it was before the update, as DynamoDB does
  const before = current ? structuredClone(current) : undefined;
  let clause = '';
  while (parser.peek() !== undefined) {
    const tok = parser.peek()!.toUpperCase();
    if (tok === 'SET' || tok === 'REMOVE' || tok === 'ADD' || tok === 'DELETE') {
      clause = tok;
      parser.take();
      continue;
    }
    if (tok === ',') {
      parser.take();
      continue;
    }
    const target = pathParts(parser.take(), ctx);
    if (clause === 'SET') {
      parser.take('=');
      const term = (): unknown => {
        const fn = parser.peek()?.toLowerCase();
        if ((fn === 'if_not_exists' || fn === 'list_append') && parser.peek(1) === '(') {
          parser.take();
          parser.take('(');
          const a = parser.operand(before);
          parser.take(',');
          const b = parser.operand(before);
          parser.take(')');
          if (fn === 'if_not_exists') return a === undefined ? b : a;
          if (!Array.isArray(a) || !Array.isArray(b)) throw new ExpressionError('list_append takes two lists');
          return [...a, ...b];
        }
        return parser.operand(before);
      };
      let v = term();
      while (parser.peek() === '+' || parser.peek() === '-') {
        const op = parser.take();
        const r = term();
        if (typeof v !== 'number' || typeof r !== 'number') throw new ExpressionError('an operand in the update expression has an incorrect data type');
        v = op === '+' ? v + r : v - r;
      }
      writePath(item, target, structuredClone(v));
    } else if (clause === 'REMOVE') {
      writePath(item, target, undefined);
    } else if (clause === 'ADD') {
      const v = parser.operand(before);
      const have = readPath(item, target);
      if (typeof v === 'number') {
        if (have !== undefined && typeof have !== 'number') throw new ExpressionError('an operand in the update expression has an incorrect data type');
        writePath(item, target, ((have as number | undefined) ?? 0) + v);
      } else if (v instanceof Set) {
        writePath(item, target, new Set([...((have as Set<unknown> | undefined) ?? []), ...v]));
      } else throw new ExpressionError('ADD takes a number or a set');
    } else {
      throw new ExpressionError(`unsupported update clause in "${expr}"`);
    }
  }
  return item;
}

/** The item cut to the projection's top-level attributes. */
export function project(item: Item, expr: string | undefined, ctx: ExpressionContext): Item {
  if (!expr) return item;
  const out: Item = {};
  for (const tok of tokenize(expr)) {
    if (tok === ',') continue;
    const parts = pathParts(tok, ctx);
    if (item[parts[0]] !== undefined) out[parts[0]] = item[parts[0]];
  }
  return out;
}
