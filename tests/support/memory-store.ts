import type { Store } from '../../lib/store';

// A stand-in for DynamoDB in unit tests of the conditional-write protocols (lib/store/window.ts):
// GetItem (consistent), PutItem and TransactWriteItems (puts, updates and condition checks) with the
// conditions the windows, the audit chain's head and the password service's pin check use. Every call yields to the event loop first, a
// random number of times, so parallel callers interleave between their read and their write.
export function memoryStore(): Store & { items: Map<string, any> } {
  const items = new Map<string, any>();
  const k = (key: { pk: string; sk: string }) => `${key.pk}\u0000${key.sk}`;
  const yieldRandomly = async () => {
    for (let i = Math.floor(Math.random() * 4); i >= 0; i--) await new Promise((r) => setImmediate(r));
  };
  // the conditions of the windows, the audit chain's head and the password service's pin check:
  // `attribute_not_exists(pk)`, `a.b = :v` (names through #placeholders), joined by AND / OR
  const holds = (put: any) => {
    const current = items.get(k(put.Item ?? put.Key));
    if (!put.ConditionExpression) return true;
    const value = (path: string) =>
      path.split('.').reduce((o: any, part) => (o === undefined ? undefined : o[put.ExpressionAttributeNames?.[part] ?? part]), current);
    const term = (t: string): boolean => {
      if (t === 'attribute_not_exists(pk)') return current === undefined;
      const m = /^([#\w.]+) (=|<=) (:\w+)$/.exec(t);
      if (!m) throw new Error(`memory store: unsupported condition ${put.ConditionExpression}`);
      const [have, want] = [value(m[1]), put.ExpressionAttributeValues[m[3]]];
      if (current === undefined || have === undefined) return false;
      return m[2] === '=' ? have === want : have <= want;
    };
    return put.ConditionExpression.split(' OR ').some((alt: string) => alt.split(' AND ').every((t) => term(t.trim())));
  };
  // an update's `SET #a = :v, ...` and `ADD #n :v` (a number) on the item, or a new one from its key
  const updated = (u: any) => {
    const item = structuredClone(items.get(k(u.Key)) ?? u.Key);
    const name = (n: string) => u.ExpressionAttributeNames?.[n] ?? n;
    const m = /^SET (.+?)(?: ADD (.+))?$/.exec(u.UpdateExpression);
    if (!m) throw new Error(`memory store: unsupported update ${u.UpdateExpression}`);
    for (const a of m[1].split(',')) {
      const [n, v] = a.trim().split(' = ');
      item[name(n)] = structuredClone(u.ExpressionAttributeValues[v]);
    }
    for (const a of m[2]?.split(',') ?? []) {
      const [n, v] = a.trim().split(' ');
      item[name(n)] = (item[name(n)] ?? 0) + u.ExpressionAttributeValues[v];
    }
    return item;
  };
  const failed = (name: string) => Object.assign(new Error(name), { name });
  const documentClient = {
    async send(cmd: { constructor: { name: string }; input: any }) {
      await yieldRandomly();
      const input = cmd.input;
      switch (cmd.constructor.name) {
        case 'GetCommand': {
          const it = items.get(k(input.Key));
          return { Item: it === undefined ? undefined : structuredClone(it) };
        }
        case 'PutCommand':
          if (!holds(input)) throw failed('ConditionalCheckFailedException');
          items.set(k(input.Item), structuredClone(input.Item));
          return {};
        case 'TransactWriteCommand': {
          const ops = input.TransactItems.map((t: any) => t.Put ?? t.ConditionCheck ?? t.Update);
          // as DynamoDB: one reason per item, in order, the item as it was when asked for
          const reasons = ops.map((p: any) => {
            if (holds(p)) return { Code: 'None' };
            const old = items.get(k(p.Item ?? p.Key));
            return { Code: 'ConditionalCheckFailed', ...(p.ReturnValuesOnConditionCheckFailure === 'ALL_OLD' && old ? { Item: structuredClone(old) } : {}) };
          });
          if (reasons.some((r: { Code: string }) => r.Code !== 'None')) throw Object.assign(failed('TransactionCanceledException'), { CancellationReasons: reasons });
          for (const t of input.TransactItems) {
            if (t.Put) items.set(k(t.Put.Item), structuredClone(t.Put.Item));
            if (t.Update) items.set(k(t.Update.Key), updated(t.Update));
          }
          return {};
        }
        default:
          throw new Error(`memory store: ${cmd.constructor.name} not supported`);
      }
    },
  };
  return { documentClient: documentClient as any, table: undefined as any, tableName: 'memory', items };
}
