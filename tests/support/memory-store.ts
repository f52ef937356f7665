import type { Store } from '../../lib/store';

// A stand-in for DynamoDB in unit tests of the conditional-write protocols (lib/store/window.ts):
// GetItem (consistent), PutItem and TransactWriteItems with the two conditions the windows use,
// `attribute_not_exists(pk)` and `version = :v`. Every call yields to the event loop first, a
// random number of times, so parallel callers interleave between their read and their write.
export function memoryStore(): Store & { items: Map<string, any> } {
  const items = new Map<string, any>();
  const k = (key: { pk: string; sk: string }) => `${key.pk}\u0000${key.sk}`;
  const yieldRandomly = async () => {
    for (let i = Math.floor(Math.random() * 4); i >= 0; i--) await new Promise((r) => setImmediate(r));
  };
  const holds = (put: any) => {
    const current = items.get(k(put.Item));
    if (!put.ConditionExpression) return true;
    if (put.ConditionExpression === 'attribute_not_exists(pk)') return current === undefined;
    if (put.ConditionExpression === 'version = :v') return current !== undefined && current.version === put.ExpressionAttributeValues[':v'];
    throw new Error(`memory store: unsupported condition ${put.ConditionExpression}`);
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
          const puts = input.TransactItems.map((t: any) => t.Put);
          // as DynamoDB: one reason per item, in order
          const reasons = puts.map((p: any) => ({ Code: holds(p) ? 'None' : 'ConditionalCheckFailed' }));
          if (reasons.some((r: { Code: string }) => r.Code !== 'None')) throw Object.assign(failed('TransactionCanceledException'), { CancellationReasons: reasons });
          for (const p of puts) items.set(k(p.Item), structuredClone(p.Item));
          return {};
        }
        default:
          throw new Error(`memory store: ${cmd.constructor.name} not supported`);
      }
    },
  };
  return { documentClient: documentClient as any, table: undefined as any, tableName: 'memory', items };
}
