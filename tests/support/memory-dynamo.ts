import { createStore, type Store } from '../../lib/store';

// An in-process stand-in for the table, for unit tests that drive whole handlers (the fuzz tests):
// the document client's Get, BatchGet, Put, Delete, Query and TransactWrite with the expressions lib/ and
// dynamodb-toolbox write (=, <>, <, <=, >, >=, BETWEEN, begins_with, attribute_(not_)exists,
// AND, OR, NOT, parentheses). Integration tests use the real DynamoDB Local; this only has to be
// faithful enough that a handler's input, not the store, decides what happens.

type Item = Record<string, any>;
type Ctx = { names: Record<string, string>; values: Record<string, unknown> };

/** Deep copy of plain data (structuredClone refuses objects of jest's other realm). */
const clone = <T>(v: T): T =>
  Array.isArray(v) ? (v.map(clone) as T) : v && typeof v === 'object' && !Buffer.isBuffer(v) && !(v instanceof Uint8Array) ? (Object.fromEntries(Object.entries(v).map(([k, x]) => [k, clone(x)])) as T) : v;

const failed = (name: string) => Object.assign(new Error(name), { name });

function tokenize(expr: string): string[] {
  const out: string[] = [];
  const re = /\s*(<>|<=|>=|[()=<>,]|[#:]?[A-Za-z_][A-Za-z0-9_.#:-]*)/y;
  let m: RegExpExecArray | null;
  let i = 0;
  while (i < expr.length) {
    re.lastIndex = i;
    m = re.exec(expr);
    if (!m) {
      if (/^\s*$/.test(expr.slice(i))) break;
      throw new Error(`memory dynamo: cannot read expression at "${expr.slice(i)}"`);
    }
    out.push(m[1]);
    i = re.lastIndex;
  }
  return out;
}

function evaluate(expr: string, item: Item | undefined, ctx: Ctx): boolean {
  const t = tokenize(expr);
  let p = 0;
  const peek = () => t[p];
  const take = (want?: string) => {
    const v = t[p++];
    if (want !== undefined && v?.toUpperCase() !== want) throw new Error(`memory dynamo: expected ${want} in "${expr}"`);
    return v;
  };
  const path = (tok: string) => (tok.startsWith('#') ? ctx.names[tok] : tok);
  const operand = (tok: string): unknown => (tok.startsWith(':') ? ctx.values[tok] : item?.[path(tok)]);
  const cmp = (a: any, b: any) => (a < b ? -1 : a > b ? 1 : 0);
  const primary = (): boolean => {
    const tok = take();
    if (tok === '(') {
      const v = or();
      take(')');
      return v;
    }
    if (tok.toUpperCase() === 'NOT') return !primary();
    const fn = tok.toLowerCase();
    if (fn === 'attribute_not_exists' || fn === 'attribute_exists' || fn === 'begins_with') {
      take('(');
      const a = take();
      let b: unknown;
      if (fn === 'begins_with') {
        take(',');
        b = operand(take());
      }
      take(')');
      if (fn === 'attribute_exists') return item !== undefined && item[path(a)] !== undefined;
      if (fn === 'attribute_not_exists') return item === undefined || item[path(a)] === undefined;
      const v = operand(a);
      return typeof v === 'string' && typeof b === 'string' && v.startsWith(b);
    }
    const left = operand(tok);
    const op = take().toUpperCase();
    if (op === 'BETWEEN') {
      const lo = operand(take());
      take('AND');
      const hi = operand(take());
      return left !== undefined && cmp(left, lo) >= 0 && cmp(left, hi) <= 0;
    }
    const right = operand(take());
    if (left === undefined) return op === '<>';
    switch (op) {
      case '=':
        return JSON.stringify(left) === JSON.stringify(right);
      case '<>':
        return JSON.stringify(left) !== JSON.stringify(right);
      case '<':
        return cmp(left, right) < 0;
      case '<=':
        return cmp(left, right) <= 0;
      case '>':
        return cmp(left, right) > 0;
      case '>=':
        return cmp(left, right) >= 0;
      default:
        throw new Error(`memory dynamo: operator ${op} in "${expr}"`);
    }
  };
  const and = (): boolean => {
    let v = primary();
    while (peek()?.toUpperCase() === 'AND') {
      take();
      const r = primary();
      v = v && r;
    }
    return v;
  };
  const or = (): boolean => {
    let v = and();
    while (peek()?.toUpperCase() === 'OR') {
      take();
      const r = and();
      v = v || r;
    }
    return v;
  };
  const v = or();
  if (p !== t.length) throw new Error(`memory dynamo: trailing tokens in "${expr}"`);
  return v;
}

/** A Store whose document client keeps the table in a Map (pk → sk → item). */
export function memoryDynamoStore(tableName = 'memory'): Store & { items: Map<string, Map<string, Item>> } {
  const store = createStore({ endpoint: 'http://127.0.0.1:9', tableName });
  const items = new Map<string, Map<string, Item>>();
  const get = (key: Item) => items.get(key.pk)?.get(key.sk);
  const ctxOf = (input: any): Ctx => ({ names: input.ExpressionAttributeNames ?? {}, values: input.ExpressionAttributeValues ?? {} });
  const holds = (input: any, current: Item | undefined) => !input.ConditionExpression || evaluate(input.ConditionExpression, current, ctxOf(input));
  const put = (it: Item) => {
    let part = items.get(it.pk);
    if (!part) items.set(it.pk, (part = new Map()));
    part.set(it.sk, clone(it));
  };
  const del = (key: Item) => items.get(key.pk)?.delete(key.sk);

  (store.documentClient as any).send = async (cmd: { constructor: { name: string }; input: any }) => {
    await new Promise((r) => setImmediate(r)); // parallel callers interleave as they would over the network
    const input = cmd.input;
    switch (cmd.constructor.name) {
      case 'GetCommand': {
        const it = get(input.Key);
        return { Item: it === undefined ? undefined : clone(it) };
      }
      case 'BatchGetCommand': {
        const Responses: Record<string, Item[]> = {};
        for (const [table, req] of Object.entries(input.RequestItems as Record<string, { Keys: Item[] }>)) {
          Responses[table] = req.Keys.map((k) => get(k)).filter((it): it is Item => it !== undefined).map((it) => clone(it));
        }
        return { Responses, UnprocessedKeys: {} };
      }
      case 'PutCommand':
        if (!holds(input, get(input.Item))) throw failed('ConditionalCheckFailedException');
        put(input.Item);
        return {};
      case 'DeleteCommand':
        if (!holds(input, get(input.Key))) throw failed('ConditionalCheckFailedException');
        del(input.Key);
        return {};
      case 'QueryCommand': {
        const ctx = ctxOf(input);
        const pkTok = /(#?\w+)\s*=\s*(:\w+)/.exec(input.KeyConditionExpression)!;
        const pkValue = ctx.values[pkTok[2]] as string;
        let rows = [...(items.get(pkValue)?.values() ?? [])].filter((it) => evaluate(input.KeyConditionExpression, it, ctx)).sort((a, b) => (a.sk < b.sk ? -1 : a.sk > b.sk ? 1 : 0));
        if (input.ScanIndexForward === false) rows.reverse();
        if (input.ExclusiveStartKey) {
          const i = rows.findIndex((r) => r.sk === input.ExclusiveStartKey.sk);
          rows = rows.slice(i + 1);
        }
        let last: Item | undefined;
        if (input.Limit !== undefined && rows.length > input.Limit) {
          rows = rows.slice(0, input.Limit);
          last = { pk: pkValue, sk: rows[rows.length - 1].sk };
        }
        if (input.FilterExpression) rows = rows.filter((it) => evaluate(input.FilterExpression, it, ctx));
        return { Items: rows.map((r) => clone(r)), Count: rows.length, ...(last ? { LastEvaluatedKey: last } : {}) };
      }
      case 'TransactWriteCommand': {
        const ops = input.TransactItems as any[];
        for (const op of ops) {
          const o = op.Put ?? op.Delete ?? op.ConditionCheck;
          if (!o || op.Update) throw new Error('memory dynamo: unsupported transaction item');
          if (!holds(o, get(op.Put ? o.Item : o.Key))) throw failed('TransactionCanceledException');
        }
        for (const op of ops) {
          if (op.Put) put(op.Put.Item);
          else if (op.Delete) del(op.Delete.Key);
        }
        return {};
      }
      case 'BatchWriteCommand': {
        for (const reqs of Object.values(input.RequestItems as Record<string, Array<{ PutRequest?: { Item: Item }; DeleteRequest?: { Key: Item } }>>)) {
          for (const r of reqs) {
            if (r.PutRequest) put(r.PutRequest.Item);
            else if (r.DeleteRequest) del(r.DeleteRequest.Key);
          }
        }
        return { UnprocessedItems: {} };
      }
      case 'ScanCommand': {
        // one page holding the whole table
        return { Items: [...items.values()].flatMap((part) => [...part.values()]).map((it) => clone(it)) };
      }
      default:
        throw new Error(`memory dynamo: ${cmd.constructor.name} not supported`);
    }
  };
  return Object.assign(store, { items });
}
