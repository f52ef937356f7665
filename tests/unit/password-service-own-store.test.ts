import fs from 'node:fs';
import path from 'node:path';
import { AuditChain } from '../../lib/audit';
import { holdsServiceItems, isServiceItem, purgeServiceAudit, SERVICE_CHAIN, SERVICE_PARTITIONS, serviceAuditChain } from '../../lib/password-service/link/service-chain';
import { memoryStore } from '../support/memory-store';

// The password service's items and who purges its audit chain (issue 26): on DynamoDB the console
// and the service share a table and the console's retention purges both chains; on SQLite each
// owns its file, the console cannot see the service's chain and the service purges it itself.

describe("the password service's partitions", () => {
  it('are the ones its AWS role may write (serverless.password-service.yml, ownPartitions)', () => {
    const yml = fs.readFileSync(path.resolve(__dirname, '../../serverless.password-service.yml'), 'utf8');
    const block = /ownPartitions:\n((?:\s+- .+\n)+)/.exec(yml)![1];
    const listed = block.split('\n').map((l) => l.trim().replace(/^- /, '')).filter(Boolean);
    expect([...SERVICE_PARTITIONS].sort()).toEqual(listed.sort());
  });
  it.each([
    ['PWDSVC', true],
    ['LINKNONCE', true],
    ['WINDOW#pwdsvc-laps#2f5c', true],
    [`AUDIT#${SERVICE_CHAIN}`, true],
    [`AUDITMETA#${SERVICE_CHAIN}`, true],
    ['AUDIT#console', false],
    ['AUDITMETA#console', false],
    ['INSTANCE', false],
    [`DCHEALTH#${SERVICE_CHAIN}`, true],
    ['DCHEALTH#console', false],
    ['WINDOW#laps-reads#2f5c', false],
    ['PWDSVCX', false],
    [undefined, false],
  ])('%s is the service\'s: %s', (pk, theirs) => expect(isServiceItem(pk)).toBe(theirs));
});

describe("the password service's audit retention", () => {
  const DAY = 86_400_000;
  async function chainWithOldRows(store: ReturnType<typeof memoryStore>) {
    const old = new AuditChain(store, SERVICE_CHAIN, { now: () => Date.now() - 40 * DAY });
    await old.append({ event: 'laps.read', outcome: 'success', actor: { name: 'helpdesk-link', provider: 'link' } });
    await old.append({ event: 'laps.read', outcome: 'success', actor: { name: 'helpdesk-link', provider: 'link' } });
  }

  it('is the console\'s job only where the console\'s store holds the chain (DynamoDB, one shared table)', () => {
    expect(holdsServiceItems({ ...memoryStore(), kind: 'dynamodb' })).toBe(true);
    expect(holdsServiceItems(memoryStore())).toBe(false);
  });

  it('purges the rows past Audit:RetentionDays in the service\'s own store, the purge audited in its chain', async () => {
    const store = memoryStore();
    await chainWithOldRows(store);
    expect(await purgeServiceAudit(store, 30)).toBe(2);
    const rows = [];
    for await (const r of serviceAuditChain(store).rows()) rows.push(r);
    expect(rows.map((r) => [r.event, r.details?.deleted])).toEqual([['audit.purge', 2]]);
    expect((await serviceAuditChain(store).verify()).ok).toBe(true);
  });

  it('keeps every row with 0 and rows younger than the retention', async () => {
    const store = memoryStore();
    await chainWithOldRows(store);
    expect(await purgeServiceAudit(store, 0)).toBe(0);
    expect(await purgeServiceAudit(store, 60)).toBe(0);
    expect([...store.items.keys()].filter((k) => k.startsWith(`AUDIT#${SERVICE_CHAIN}\u0000`))).toHaveLength(2);
  });
});
