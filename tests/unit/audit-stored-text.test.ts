import { randomBytes } from 'node:crypto';
import { AuditChain, pad } from '../../lib/audit';
import { canonicalJson } from '../../lib/audit/canonical';
import { textNamesSeq } from '../../lib/audit/rows';
import { memoryDynamoStore } from '../support/memory-store';

// Rows are stored as the canonical text their hash covers (verify hashes what it reads); rows
// written before hold the body as an object. A chain with both verifies, an edit of either kind is
// caught, and the rows read back are the text that was hashed, not another field beside it.
const key = randomBytes(32);
const actor = { id: 'AAAA-op', name: 'Op-Helpdesk', ip: '127.0.0.1' };

async function chainOf(n: number) {
  const store = memoryDynamoStore();
  const chain = new AuditChain(store, 'text', { key: async () => key });
  for (let i = 1; i <= n; i++) await chain.append({ event: 'users.unlock', outcome: 'success', actor, target: { id: `guid-${i}`, name: `u${i}` }, details: { i, seq: 99 } });
  const item = (seq: number) => store.items.get('AUDIT#text')!.get(pad(seq)) as Record<string, any>;
  /** what someone with write access to the store does to a row */
  const edit = async (seq: number, change: (it: Record<string, any>) => void) => {
    const it = item(seq);
    change(it);
    await store.put({ Item: it });
  };
  return { store, chain, item, edit };
}

describe('audit rows stored as their canonical text', () => {
  it('stores the hashed text and no body object', async () => {
    const { chain, item } = await chainOf(3);
    const it2 = item(2);
    expect(typeof it2.bodyText).toBe('string');
    expect(it2.body).toBeUndefined();
    expect(JSON.parse(it2.bodyText)).toMatchObject({ seq: 2, event: 'users.unlock', details: { i: 2, seq: 99 } });
    expect(await chain.verify()).toEqual({ ok: true, checked: 3 });
  });

  it('verifies rows of the older shape (a body object) beside text rows, and catches an edit of either', async () => {
    const { chain, item, edit } = await chainOf(4);
    // rows 1 and 2 as an older version wrote them
    for (const seq of [1, 2]) {
      await edit(seq, (it) => {
        it.body = JSON.parse(it.bodyText);
        delete it.bodyText;
      });
    }
    expect(item(1).bodyText).toBeUndefined();
    expect(await chain.verify()).toEqual({ ok: true, checked: 4 });
    expect(await chain.row(1)).toMatchObject({ seq: 1, event: 'users.unlock', target: { name: 'u1' } });
    await edit(1, (it) => (it.body.outcome = 'failure'));
    expect(await chain.verify()).toMatchObject({ ok: false, firstBadSeq: 1, problem: 'hash_mismatch' });
    await edit(1, (it) => (it.body.outcome = 'success'));
    expect(await chain.verify()).toEqual({ ok: true, checked: 4 });
    await edit(3, (it) => (it.bodyText = it.bodyText.replace('"u3"', '"u9"')));
    expect(await chain.verify()).toMatchObject({ ok: false, firstBadSeq: 3, problem: 'hash_mismatch' });
  });

  it('shows what is hashed: a body object planted beside the text is neither read nor verified', async () => {
    const { chain, edit } = await chainOf(2);
    await edit(2, (it) => (it.body = { ...JSON.parse(it.bodyText), outcome: 'denied', event: 'forged' }));
    expect(await chain.verify()).toEqual({ ok: true, checked: 2 });
    expect(await chain.row(2)).toMatchObject({ event: 'users.unlock', outcome: 'success' });
  });

  it('refuses a row whose text names another sequence (link_broken, found before its hash)', async () => {
    const { chain, edit } = await chainOf(3);
    await edit(2, (it) => (it.bodyText = canonicalJson({ ...JSON.parse(it.bodyText), seq: 7 })));
    expect(await chain.verify()).toMatchObject({ ok: false, firstBadSeq: 2, problem: 'link_broken' });
  });

  it('reads the top-level sequence, not one inside details, a string or a longer number', () => {
    const text = canonicalJson({ actor, details: { seq: 5, note: '"seq":5,' }, event: 'e', seq: 12, target: { id: 'x' } });
    expect(textNamesSeq(text, 12)).toBe(true);
    expect(textNamesSeq(text, 5)).toBe(false);
    expect(textNamesSeq(text, 1)).toBe(false);
    expect(textNamesSeq(canonicalJson({ event: 'e', seq: 120 }), 12)).toBe(false);
    expect(textNamesSeq(canonicalJson({ event: 'e' }), 12)).toBe(false);
  });
});
