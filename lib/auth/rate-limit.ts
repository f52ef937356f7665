import { createHash } from 'node:crypto';
import type { Store } from '../store';
import { addToCounter, readCounter } from '../store/records';

// Fixed-window failure counters in DynamoDB, so a limit holds across instances.
// Keys are hashed: a user name or address is not stored in clear in a counter key.
const h = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 32);

function slot(windowSeconds: number) {
  const now = Math.floor(Date.now() / 1000);
  const start = now - (now % windowSeconds);
  return { sk: String(start), ttl: start + windowSeconds * 2 };
}

export async function failureCount(store: Store, scope: string, subject: string, windowSeconds: number): Promise<number> {
  return readCounter(store, `RATE#${scope}#${h(subject)}`, slot(windowSeconds).sk);
}

export async function recordFailure(store: Store, scope: string, subject: string, windowSeconds: number): Promise<number> {
  const { sk, ttl } = slot(windowSeconds);
  return addToCounter(store, `RATE#${scope}#${h(subject)}`, sk, 1, ttl);
}
