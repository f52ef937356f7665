import { AuditChain, type AuditRow } from '../../lib/audit';
import { loadMasterKey } from '../../lib/crypto/master-key';
import { storeOfEnvironment } from '../../lib/store';
import { scratchStoreEnv, stack } from '../support/stack';

// Audit retention (console spec, Limits and Configuration keys: Audit:RetentionDays) through the
// daily scheduled function itself (functions/scheduled/audit-retention.ts), configured by its
// environment as deployed, on a store of the test's own: rows older than the retention are
// purged, newer ones kept, the purge is audited, and the chain still verifies from the signed
// anchor at the cut, in full and incrementally from a checkpoint the purge went past.

const DAY = 86400_000;

describe('Audit:RetentionDays: the daily retention job', () => {
  const storeEnv = scratchStoreEnv('hdc-retention');
  const store = storeOfEnvironment(storeEnv);
  const key = () => loadMasterKey({ HDC_MASTER_KEY_FILE: stack.masterKeyFile });
  const keys = ['HDC_SQLITE_FILE', 'DYNAMODB_ENDPOINT', 'HDC_TABLE', 'HDC_MASTER_KEY_FILE', 'Audit__RetentionDays'] as const;
  const saved = Object.fromEntries(keys.map((k) => [k, process.env[k]]));
  afterAll(() => {
    for (const k of keys) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  });
  const rowsOf = async (chain: AuditChain) => {
    const out: AuditRow[] = [];
    for await (const r of chain.rows({})) out.push(r);
    return out;
  };

  it('purges the rows older than the retention, keeps the newer ones, audits the purge; the chain verifies from the cut', async () => {
    await store.ensure();
    let now = Date.now() - 60 * DAY;
    // the console's chain as its runtime writes it (signed state, lookup items), with a clock of the test's
    const chain = new AuditChain(store, 'console', { key, lookups: true, now: () => now });
    for (let i = 0; i < 4; i++) await chain.append({ event: 'test.old', outcome: 'success', target: { id: 'retention-old' } });
    // verified up to here: the signed checkpoint sits on a row the purge will take
    expect((await chain.verify('incremental')).ok).toBe(true);
    expect(await chain.checkpoint()).toMatchObject({ seq: 4, valid: true });
    now = Date.now() - 31 * DAY;
    await chain.append({ event: 'test.old', outcome: 'success' });
    now = Date.now() - 29 * DAY;
    for (let i = 0; i < 2; i++) await chain.append({ event: 'test.recent', outcome: 'success' });
    now = Date.now();
    await chain.append({ event: 'test.recent', outcome: 'success' });

    // the deployed function, configured as deployed (its environment)
    Object.assign(process.env, storeEnv, { HDC_MASTER_KEY_FILE: stack.masterKeyFile, Audit__RetentionDays: '30' });
    const { handler } = await import('../../functions/scheduled/audit-retention');
    const out = await handler();
    expect(out).toMatchObject({ deleted: 5 });

    const reader = new AuditChain(store, 'console', { key, lookups: true });
    const rows = await rowsOf(reader);
    expect(rows.map((r) => r.event)).toEqual(['test.recent', 'test.recent', 'test.recent', 'audit.purge']);
    expect(rows[0].seq).toBe(6);
    expect(rows[3]).toMatchObject({ outcome: 'success', actor: { name: 'retention', provider: 'system' }, details: { deleted: 5, throughSeq: 5, retentionDays: 30 } });
    // the signed anchor is the cut: the chain verifies from it, in full and from the old checkpoint
    expect(await reader.extent()).toEqual({ anchorSeq: 5, headSeq: 9 });
    expect(await reader.verify()).toEqual({ ok: true, checked: 4 });
    expect(await reader.verify('incremental')).toMatchObject({ ok: true });
    expect(await reader.checkpoint()).toMatchObject({ seq: 9, valid: true });
    // the purged rows' lookup items went with them
    expect(await reader.lookupPage(`AUDITIX#${reader.chain}#target#retention-old`, 0, 999, 50)).toEqual([]);

    // the next day: nothing old is left, nothing is purged, nothing is written
    expect(await handler()).toMatchObject({ deleted: 0 });
    expect((await reader.extent()).headSeq).toBe(9);
  });

  it('0 keeps everything', async () => {
    const env = scratchStoreEnv('hdc-retention-0');
    const s = storeOfEnvironment(env);
    await s.ensure();
    const chain = new AuditChain(s, 'console', { key, now: () => Date.now() - 3650 * DAY });
    for (let i = 0; i < 3; i++) await chain.append({ event: 'test.ancient', outcome: 'success' });
    const { createRuntime } = await import('../../lib/runtime');
    const rt = createRuntime({ env: { ...env, HDC_MASTER_KEY_FILE: stack.masterKeyFile, Audit__RetentionDays: '0' }, store: s });
    expect(rt.config.Audit.RetentionDays).toBe(0);
    expect(await rt.audit.purge(rt.config.Audit.RetentionDays, { name: 'retention' })).toBe(0);
    expect((await rowsOf(new AuditChain(s, 'console'))).map((r) => r.event)).toEqual(['test.ancient', 'test.ancient', 'test.ancient']);
  });
});
