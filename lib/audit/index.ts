import { randomUUID } from 'node:crypto';
import { any, Entity, GetItemCommand, item, number, PutItemCommand, QueryCommand, string } from 'dynamodb-toolbox';
import { DeleteCommand, GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { auditLogger } from '../log';
import { isConditionFailed, type Store } from '../store';
import { chainHash, GENESIS_HASH } from './canonical';

// The tamper-evident audit log: one hash chain per application ('console', 'fleet').
// Row N stores hash(prevHash of row N-1 ‖ canonical body of row N). Appends from concurrent
// instances race on a transaction: put row N (must not exist) + move the head from N-1 to N,
// so the chain never forks, and deleting the newest rows is detected against the head.

export type AuditOutcome = 'success' | 'failure' | 'denied' | 'error' | 'unknown' | string;

export interface AuditActor {
  id?: string;
  name?: string;
  provider?: string;
  ip?: string;
}
export interface AuditInput {
  event: string;
  outcome: AuditOutcome;
  actor?: AuditActor;
  target?: { id?: string; name?: string; dn?: string; kind?: string };
  reason?: string;
  ticket?: string;
  correlationId?: string;
  /** Fleet plane: the client the row concerns; inside the hash when present. */
  client?: string;
  details?: Record<string, unknown>;
}
export interface AuditRow extends AuditInput {
  seq: number;
  at: string;
  id: string;
  prevHash: string;
  hash: string;
}

const SENSITIVE_KEY = /pass(word)?|secret|token|otp|totp|key$/i;

/** Defence in depth: a details key that names a secret never reaches the chain or stdout. */
export function scrubDetails(details?: Record<string, unknown>): Record<string, unknown> | undefined {
  if (!details) return undefined;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(details)) {
    out[k] = SENSITIVE_KEY.test(k) ? '[redacted]' : v && typeof v === 'object' && !Array.isArray(v) ? scrubDetails(v as Record<string, unknown>) : v;
  }
  return out;
}

const pad = (n: number) => String(n).padStart(12, '0');

function entities(store: Store) {
  const row = new Entity({
    name: 'AuditRow',
    table: store.table,
    timestamps: false,
    schema: item({
      pk: string().key(),
      sk: string().key(),
      seq: number(),
      body: any(), // the canonical body; kept whole so verification recomputes exactly what was hashed
      prevHash: string(),
      hash: string(),
    }),
  });
  const meta = new Entity({
    name: 'AuditMeta',
    table: store.table,
    timestamps: false,
    schema: item({ pk: string().key(), sk: string().key(), seq: number(), hash: string(), verifiedAt: string().optional(), fullVerifiedAt: string().optional() }),
  });
  return { row, meta };
}

export interface VerifyResult {
  ok: boolean;
  checked: number;
  firstBadSeq?: number;
  problem?: 'hash_mismatch' | 'link_broken' | 'missing_row' | 'head_mismatch';
}

export class AuditChain {
  private readonly e: ReturnType<typeof entities>;
  private readonly pk: string;
  private readonly headKey: { pk: string; sk: string };
  private readonly anchorKey: { pk: string; sk: string };
  private readonly checkpointKey: { pk: string; sk: string };
  private lastKnown?: { seq: number; hash: string }; // a cache that may be lost

  constructor(
    private readonly store: Store,
    readonly chain: string = 'console',
    private readonly clock: { now: () => number } = { now: Date.now },
  ) {
    this.e = entities(store);
    this.pk = `AUDIT#${chain}`;
    this.headKey = { pk: `AUDITMETA#${chain}`, sk: 'HEAD' };
    this.anchorKey = { pk: `AUDITMETA#${chain}`, sk: 'ANCHOR' };
    this.checkpointKey = { pk: `AUDITMETA#${chain}`, sk: 'VERIFIED' };
  }

  private async head(): Promise<{ seq: number; hash: string } | undefined> {
    const { Item } = await this.e.meta.build(GetItemCommand).key(this.headKey).options({ consistent: true }).send();
    return Item ? { seq: Item.seq, hash: Item.hash } : undefined;
  }

  private async anchor(): Promise<{ seq: number; hash: string }> {
    const { Item } = await this.e.meta.build(GetItemCommand).key(this.anchorKey).options({ consistent: true }).send();
    return Item ? { seq: Item.seq, hash: Item.hash } : { seq: 0, hash: GENESIS_HASH };
  }

  /** Append one row; retries on a lost race until it is written. Also writes it to stdout (category Audit). */
  async append(input: AuditInput): Promise<AuditRow> {
    const body = {
      ...input,
      details: scrubDetails(input.details),
      at: new Date(this.clock.now()).toISOString(),
      id: randomUUID(),
    };
    for (let attempt = 0; attempt < 500; attempt++) {
      const prev = this.lastKnown ?? (await this.head()) ?? (await this.anchor());
      const seq = prev.seq + 1;
      const fullBody = { ...body, seq };
      const hash = chainHash(prev.hash, fullBody);
      try {
        await this.store.documentClient.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Put: {
                  TableName: this.store.tableName,
                  Item: { pk: this.pk, sk: pad(seq), _et: 'AuditRow', seq, body: fullBody, prevHash: prev.hash, hash },
                  ConditionExpression: 'attribute_not_exists(pk)',
                },
              },
              {
                Put: {
                  TableName: this.store.tableName,
                  Item: { ...this.headKey, _et: 'AuditMeta', seq, hash },
                  ConditionExpression: 'attribute_not_exists(pk) OR seq = :prev',
                  ExpressionAttributeValues: { ':prev': prev.seq },
                },
              },
            ],
          }),
        );
        this.lastKnown = { seq, hash };
        const row: AuditRow = { ...fullBody, prevHash: prev.hash, hash };
        auditLogger.info(row.event, { audit: row });
        return row;
      } catch (e) {
        if (!isConditionFailed(e) && (e as Error).name !== 'TransactionConflictException') throw e;
        this.lastKnown = undefined;
        await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, 2 + attempt * 2)));
      }
    }
    throw new Error('audit append did not win a slot after 500 attempts');
  }

  /** Read rows in order (ascending) or newest first. */
  async *rows(opts: { reverse?: boolean; afterSeq?: number } = {}): AsyncGenerator<AuditRow> {
    let exclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const res = await this.store.table
        .build(QueryCommand)
        .entities(this.e.row)
        .query({ partition: this.pk, ...(opts.afterSeq !== undefined ? { range: { gt: pad(opts.afterSeq) } } : {}) })
        .options({ reverse: opts.reverse, consistent: true, exclusiveStartKey: exclusiveStartKey as any, maxPages: 1, limit: 500 })
        .send();
      for (const it of res.Items ?? []) yield { ...(it.body as AuditInput & { at: string; id: string }), seq: it.seq, prevHash: it.prevHash, hash: it.hash, _sk: it.sk } as AuditRow;
      exclusiveStartKey = res.LastEvaluatedKey;
    } while (exclusiveStartKey);
  }

  /**
   * Walk the chain and report the first row that does not verify. `full` (the audit.verify route,
   * the daily job) starts at the anchor; `incremental` (the fleet status poll) starts at the last
   * verified row, after checking that row still holds the hash it was verified with, so a poll
   * costs the new rows only. Each success moves the checkpoint.
   */
  async verify(mode: 'full' | 'incremental' = 'full'): Promise<VerifyResult> {
    let start = await this.anchor();
    let checked = 0;
    const checkpoint = mode === 'incremental' ? await this.checkpoint() : undefined;
    if (checkpoint) {
      const { Item } = await this.store.documentClient.send(new GetCommand({ TableName: this.store.tableName, Key: { pk: this.pk, sk: pad(checkpoint.seq) }, ConsistentRead: true }));
      if (!Item || Item.hash !== checkpoint.hash) return { ok: false, checked, firstBadSeq: checkpoint.seq, problem: Item ? 'hash_mismatch' : 'missing_row' };
      start = checkpoint;
    }
    let expectedSeq = start.seq + 1;
    let prevHash = start.hash;
    for await (const row of this.rows({ afterSeq: start.seq })) {
      const { prevHash: storedPrev, hash, _sk, ...rest } = row as AuditRow & { _sk: string };
      if (row.seq !== expectedSeq || _sk !== pad(row.seq)) {
        return { ok: false, checked, firstBadSeq: expectedSeq, problem: row.seq > expectedSeq ? 'missing_row' : 'link_broken' };
      }
      if (storedPrev !== prevHash) return { ok: false, checked, firstBadSeq: row.seq, problem: 'link_broken' };
      const body = { ...rest } as Record<string, unknown>;
      delete body.prevHash;
      if (chainHash(prevHash, body) !== hash) return { ok: false, checked, firstBadSeq: row.seq, problem: 'hash_mismatch' };
      prevHash = hash;
      expectedSeq++;
      checked++;
    }
    const head = await this.head();
    if (head && (head.seq !== expectedSeq - 1 || head.hash !== prevHash)) {
      return { ok: false, checked, firstBadSeq: expectedSeq, problem: 'head_mismatch' };
    }
    if (expectedSeq - 1 > 0) {
      const now = new Date().toISOString();
      await this.e.meta.build(PutItemCommand).item({ ...this.checkpointKey, seq: expectedSeq - 1, hash: prevHash, verifiedAt: now, fullVerifiedAt: mode === 'full' ? now : checkpoint?.fullVerifiedAt }).send();
    }
    return { ok: true, checked };
  }

  /** The last verified row (sequence, hash) and when the chain was last verified in full. */
  async checkpoint(): Promise<{ seq: number; hash: string; fullVerifiedAt?: string } | undefined> {
    const { Item } = await this.e.meta.build(GetItemCommand).key(this.checkpointKey).options({ consistent: true }).send();
    return Item ? { seq: Item.seq, hash: Item.hash, fullVerifiedAt: Item.fullVerifiedAt } : undefined;
  }

  /** Rows of an event since a time, newest first (stops at the first older row). */
  async countSince(event: string, since: Date, outcome?: string): Promise<number> {
    let n = 0;
    for await (const row of this.rows({ reverse: true })) {
      if (row.at < since.toISOString()) break;
      if (row.event === event && (outcome === undefined || row.outcome === outcome)) n++;
    }
    return n;
  }

  /**
   * Delete rows older than `retentionDays` (0 keeps everything). The anchor moves to the last
   * deleted row first, so the remaining chain still verifies; the purge itself is audited.
   */
  async purge(retentionDays: number, actor: AuditActor): Promise<number> {
    if (retentionDays === 0) return 0;
    const cutoff = new Date(this.clock.now() - retentionDays * 86400_000).toISOString();
    const doomed: AuditRow[] = [];
    for await (const row of this.rows()) {
      if (row.at >= cutoff) break;
      doomed.push(row);
    }
    if (doomed.length === 0) return 0;
    const last = doomed[doomed.length - 1];
    await this.e.meta.build(PutItemCommand).item({ ...this.anchorKey, seq: last.seq, hash: last.hash }).send();
    // a checkpoint on a purged row would point at nothing: the next verification starts at the anchor
    const checkpoint = await this.checkpoint();
    if (checkpoint && checkpoint.seq <= last.seq) await this.store.documentClient.send(new DeleteCommand({ TableName: this.store.tableName, Key: this.checkpointKey }));
    for (const row of doomed) {
      await this.store.documentClient.send(
        new TransactWriteCommand({ TransactItems: [{ Delete: { TableName: this.store.tableName, Key: { pk: this.pk, sk: pad(row.seq) } } }] }),
      );
    }
    await this.append({ event: 'audit.purge', outcome: 'success', actor, details: { deleted: doomed.length, throughSeq: last.seq, retentionDays } });
    return doomed.length;
  }
}
